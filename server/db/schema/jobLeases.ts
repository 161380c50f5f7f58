/** Who runs each background job now, and until when: see migration 0012. */
export interface JobLeasesTable {
  name: string;
  holder: string;
  /** Unix milliseconds. */
  expires_at: number;
  detail: string | null;
}

export interface JobLeasesSchema {
  job_leases: JobLeasesTable;
}
