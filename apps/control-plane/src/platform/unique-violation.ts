/** PostgreSQL's unique_violation (23505): another request inserted the same key between our read and our insert. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}
