/** The routing index: one row per (group, model, channel). */
export interface AbilitiesTable {
  group: string;
  model: string;
  channel_id: number;
  enabled: number;
  priority: number;
  weight: number;
}

export interface AbilitiesSchema {
  abilities: AbilitiesTable;
}
