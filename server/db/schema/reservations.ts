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

export interface ReservationsSchema {
  reservations: ReservationsTable;
  relay_nodes: RelayNodesTable;
}
