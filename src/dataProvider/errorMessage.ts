// The message of a failed data-provider call, for the notices of every screen.

/** The message of whatever a data provider call threw, for a notice. */
export function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') {
    return (error as { message: string }).message;
  }
  return `Error: ${String(error)}`;
}
