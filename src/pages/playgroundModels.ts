// The model the playground opens on (PlaygroundPage.tsx): the first of the
// group's models that a channel whose last test passed serves, so a first
// message goes to a model that works; otherwise the first model. Channel test
// results (test_time, test_error, status) are in the channel list, which only
// admins may read; for anyone else no model is known to work and the first is
// chosen. Only the group's models (from /api/pricing) can be chosen; the
// channels' groups are not compared (the signed-in user as stored has none).
import type { ChannelRecord } from '../../common/records';
import { ChannelStatus, isAdmin } from '../../common/roles';
import { dataProvider } from '../dataProvider';
import { readStoredUser } from '../dataProvider/storage';

/** The models of the channels that are enabled and passed their last test (tested, with no error). */
export function passingModels(channels: readonly ChannelRecord[]): Set<string> {
  const passing = new Set<string>();
  for (const channel of channels) {
    const passed = Number(channel.status) === ChannelStatus.enabled && Number(channel.test_time) > 0 && !channel.test_error;
    if (!passed) continue;
    for (const model of String(channel.models ?? '').split(',')) if (model.trim()) passing.add(model.trim());
  }
  return passing;
}

/** The first model a passing channel serves, else the first model ('' when there is none). */
export function openingModel(models: readonly string[], passing: ReadonlySet<string>): string {
  return models.find((model) => passing.has(model)) ?? models[0] ?? '';
}

/** The models known to work, from the channel list (admins); empty for anyone else or when the list cannot be read. */
export async function modelsKnownToWork(): Promise<Set<string>> {
  if (!isAdmin(readStoredUser()?.role)) return new Set();
  try {
    const { data } = await dataProvider.getList<ChannelRecord>('channel', {
      pagination: { page: 1, perPage: 100 },
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    return passingModels(data);
  } catch {
    return new Set();
  }
}
