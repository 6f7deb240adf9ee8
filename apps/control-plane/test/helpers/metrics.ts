import type { MetricsRegistry } from '../../src/platform/metrics/registry.ts';

/**
 * The current value of one series (0 when it does not exist yet). `name` is a counter or gauge,
 * or a histogram's `<name>_count` / `<name>_sum`.
 */
export async function metricValue(
  registry: MetricsRegistry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const base = registry.getSingleMetric(name) ? name : name.replace(/_(count|sum)$/, '');
  const metric = registry.getSingleMetric(base);
  if (!metric) throw new Error(`no metric named ${name}`);
  const { values } = await metric.get();
  const series = values.find(
    (v) =>
      (base === name || (v as { metricName?: string }).metricName === name) &&
      Object.entries(labels).every(([key, value]) => String(v.labels[key]) === value),
  );
  return series?.value ?? 0;
}
