export interface OptionsTable {
  key: string;
  value: string;
}

export interface OptionsSchema {
  options: OptionsTable;
}
