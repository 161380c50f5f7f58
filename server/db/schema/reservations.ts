/** Reservations of requests in flight (PostgreSQL and MySQL) and the relay nodes' leases: see migration 0004. */
export interface ReservationsTable {
  id: string;
  node_id: string;
  user_id: number;
  token_id: number;
  limited: number;
  amount: number;
  state: number;
  created_at: number;
}

export interface RelayNodesTable {
  id: string;
  lease_expires_at: number;
  started_at: number;
}

/** The settlement batches written on PostgreSQL and MySQL, by id: see migration 0017. */
export interface LedgerBatchesTable {
  id: string;
  created_at: number;
}

export interface ReservationsSchema {
  reservations: ReservationsTable;
  relay_nodes: RelayNodesTable;
  ledger_batches: LedgerBatchesTable;
}
