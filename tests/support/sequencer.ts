// The order test files start in. Vitest's own runs each project's files together, so in a group that holds the
// console, server and e2e projects the e2e files (each a gateway and Chromium pages: the heaviest) all ran at once,
// three on two cores, while the light server files waited for the end. Here, within each group, the files run
// longest first (from the last run's durations when Vitest has them for every file, else by size, an e2e file
// counting four times its bytes and a jsdom file twice), and an e2e file is followed by two others, so about one
// e2e file in three workers runs at a time and the short files fill the end of the run.
import { statSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const WEIGHT: Record<string, number> = { e2e: 4, console: 2 };

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const key = (file: TestSpecification) => `${file.project.name}:${file.moduleId.slice(this.ctx.config.root.length + 1)}`;
    const known = files.every((file) => cache.getFileTestResults(key(file)));
    // once per file, not once per comparison
    const costs = new Map(
      files.map((file) => [
        file,
        known ? cache.getFileTestResults(key(file))!.duration : statSync(file.moduleId).size * (WEIGHT[file.project.name] ?? 1),
      ]),
    );
    const cost = (file: TestSpecification) => costs.get(file)!;
    const groups = new Map<number, TestSpecification[]>();
    for (const file of files) {
      const order = file.project.config.sequence.groupOrder;
      groups.set(order, [...(groups.get(order) ?? []), file]);
    }
    const sorted: TestSpecification[] = [];
    for (const order of [...groups.keys()].sort((a, b) => a - b)) {
      const byCost = groups.get(order)!.sort((a, b) => cost(b) - cost(a));
      const heavy = byCost.filter((file) => file.project.name === 'e2e');
      const light = byCost.filter((file) => file.project.name !== 'e2e');
      while (heavy.length > 0 || light.length > 0) {
        if (heavy.length > 0) sorted.push(heavy.shift()!);
        sorted.push(...light.splice(0, 2));
      }
    }
    return sorted;
  }
}
