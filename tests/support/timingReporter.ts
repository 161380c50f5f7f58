// A Vitest reporter that says where a run's time went: each project's wall time (its first file's start to its
// last file's end) and file count, and the ten slowest files. It prints them at the end of every run and writes
// them to test-results/timings.json (or SWITCHBOARD_TIMINGS_FILE), which .ci/run reads for its closing summary.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

interface FileTiming {
  file: string;
  project: string;
  /** From the file's start in its worker to its end, in ms: what a reader of the run waited for it. */
  wallMs: number;
  startedAt: number;
  endedAt: number;
  tests: number;
  state: string;
}

export default class TimingReporter implements Reporter {
  private readonly started = new Map<string, number>();
  private readonly files: FileTiming[] = [];
  private readonly runStarted = Date.now();

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.moduleId, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const end = Date.now();
    const start = this.started.get(module.moduleId) ?? end - module.diagnostic().duration;
    this.files.push({
      file: relative(process.cwd(), module.moduleId),
      project: module.project.name || 'default',
      wallMs: end - start,
      startedAt: start,
      endedAt: end,
      tests: [...module.children.allTests()].length,
      state: module.state(),
    });
  }

  onTestRunEnd(): void {
    const projects = new Map<string, { files: number; tests: number; first: number; last: number }>();
    for (const timing of this.files) {
      const project = projects.get(timing.project) ?? { files: 0, tests: 0, first: timing.startedAt, last: timing.endedAt };
      project.files += 1;
      project.tests += timing.tests;
      project.first = Math.min(project.first, timing.startedAt);
      project.last = Math.max(project.last, timing.endedAt);
      projects.set(timing.project, project);
    }
    const slowest = [...this.files].sort((a, b) => b.wallMs - a.wallMs).slice(0, 10);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const lines = ['', 'Where the time went:'];
    for (const [name, project] of [...projects].sort((a, b) => a[1].first - b[1].first)) {
      lines.push(
        `  project ${name.padEnd(8)} ${seconds(project.last - project.first).padStart(8)} wall  ${String(project.files).padStart(4)} files ${String(project.tests).padStart(5)} tests`,
      );
    }
    lines.push(`  whole run        ${seconds(Date.now() - this.runStarted).padStart(8)}`);
    lines.push('The ten slowest files (start to end in their worker):');
    for (const timing of slowest) lines.push(`  ${seconds(timing.wallMs).padStart(8)}  ${timing.project.padEnd(8)} ${timing.file}`);
    console.log(lines.join('\n'));
    const out = process.env.SWITCHBOARD_TIMINGS_FILE ?? join(process.cwd(), 'test-results', 'timings.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(
      out,
      JSON.stringify(
        {
          wallMs: Date.now() - this.runStarted,
          projects: Object.fromEntries(
            [...projects].map(([name, project]) => [
              name,
              { wallMs: project.last - project.first, files: project.files, tests: project.tests },
            ]),
          ),
          files: [...this.files].sort((a, b) => b.wallMs - a.wallMs),
        },
        null,
        2,
      ),
    );
  }
}
