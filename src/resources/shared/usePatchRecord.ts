// Writes fields the server already saved (a test's response time, a fresh
// balance) into the loaded rows, without another round trip: the same cache
// update react-admin performs after its own updates.
import { useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import type { GetListResult, Identifier, RaRecord } from 'react-admin';

export function usePatchRecord(resource: string) {
  const queryClient = useQueryClient();
  return useCallback(
    (id: Identifier, changes: Partial<RaRecord>) => {
      const patch = (rows: RaRecord[]) => rows.map((row) => (String(row.id) === String(id) ? { ...row, ...changes } : row));
      queryClient.setQueriesData<GetListResult<RaRecord>>({ queryKey: [resource, 'getList'] }, (result) =>
        result?.data ? { ...result, data: patch(result.data) } : result,
      );
      queryClient.setQueriesData<RaRecord>({ queryKey: [resource, 'getOne', { id: String(id) }] }, (record) =>
        record ? { ...record, ...changes } : record,
      );
    },
    [queryClient, resource],
  );
}
