/**
 * A named probe contributing one entry to the health report's `checks`: it resolves to a message,
 * or a message with extra figures that join the check object, and throws when unhealthy. Features
 * hand their probes to the composition root, which gives them to the health report.
 */
export type HealthProbe = () => Promise<string | { message: string; details: Record<string, unknown> }>;
