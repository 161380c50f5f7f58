import type { Generated } from 'kysely';

export interface RedemptionsTable {
  id: Generated<number>;
  /** The admin who created the code. */
  user_id: number;
  key: string;
  status: number;
  name: string;
  quota: number;
  created_time: number;
  redeemed_time: number;
  redeemed_by: number;
}

export interface RedemptionsSchema {
  redemptions: RedemptionsTable;
}
