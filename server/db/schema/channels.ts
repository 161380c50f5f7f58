import type { Generated } from 'kysely';

export interface ChannelsTable {
  id: Generated<number>;
  type: number;
  key: string;
  status: number;
  name: string;
  weight: number;
  priority: number;
  /** 1 when the system (not an admin) disabled it, so health checks may re-enable it. */
  auto_disabled: number;
  created_time: number;
  test_time: number;
  response_time: number;
  base_url: string;
  other: string;
  balance: number;
  balance_updated_time: number;
  models: string;
  group: string;
  used_quota: number;
  model_mapping: string;
  /** The last test's failure ('' when it passed, or before any test). */
  test_error: Generated<string>;
  /** The model a test asks for when none is named; '' = the first of `models`. */
  test_model: Generated<string>;
}

export interface ChannelsSchema {
  channels: ChannelsTable;
}
