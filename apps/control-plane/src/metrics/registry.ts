/**
 * A small metrics registry that renders the Prometheus text exposition format 0.0.4: counters,
 * gauges and histograms with typed label names. Series without labels exist from registration
 * at zero, so a scrape always shows them; labelled series appear when first touched or when
 * pre-created with `init()`.
 */

/** The Content-Type of the text exposition format. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Prometheus client libraries' default histogram buckets, in seconds. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

type LabelValues<L extends string> = { [K in L]: string };

/** Label values escape backslash, double quote and line feed (format 0.0.4). */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text escapes backslash and line feed only. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function labelText(pairs: Array<[string, string]>): string {
  if (pairs.length === 0) return '';
  return `{${pairs.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`;
}

interface MetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

abstract class Metric<L extends string, S> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  protected readonly series = new Map<string, { labels: Array<[string, string]>; state: S }>();

  constructor(options: MetricOptions<L>) {
    if (!METRIC_NAME.test(options.name)) throw new Error(`invalid metric name ${options.name}`);
    for (const label of options.labelNames ?? []) {
      if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new Error(`invalid label name ${label}`);
    }
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
  }

  protected abstract initialState(): S;

  private keyOf(labels: Partial<LabelValues<L>> | undefined): { key: string; values: string[] } {
    const given = labels ?? {};
    const extra = Object.keys(given).filter((k) => !(this.labelNames as readonly string[]).includes(k));
    if (extra.length > 0) throw new Error(`${this.name} has no label ${extra.join(', ')}`);
    const values = this.labelNames.map((name) => {
      const value = (given as Record<string, string | undefined>)[name];
      if (typeof value !== 'string') throw new Error(`${this.name} needs label ${name}`);
      return value;
    });
    return { key: JSON.stringify(values), values };
  }

  /** The series for these label values, created at its zero state when new. */
  protected seriesFor(labels: Partial<LabelValues<L>> | undefined): S {
    const { key, values } = this.keyOf(labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: this.labelNames.map((name, i) => [name, values[i]!]), state: this.initialState() };
      this.series.set(key, entry);
    }
    return entry.state;
  }

  /** The series for these label values if it exists, without creating it. */
  protected existing(labels: Partial<LabelValues<L>> | undefined): S | undefined {
    return this.series.get(this.keyOf(labels).key)?.state;
  }

  /** Creates the series for these label values at zero, so it is scraped before first use. */
  init(labels: LabelValues<L>): void {
    this.seriesFor(labels);
  }

  protected abstract sampleLines(labels: Array<[string, string]>, state: S): string[];

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`];
    for (const { labels, state } of this.series.values()) lines.push(...this.sampleLines(labels, state));
    return lines.join('\n');
  }
}

/** A value that only goes up. */
export class Counter<L extends string = never> extends Metric<L, { value: number }> {
  readonly type = 'counter';

  constructor(options: MetricOptions<L>) {
    super(options);
    if (this.labelNames.length === 0) this.seriesFor(undefined);
  }

  protected initialState() {
    return { value: 0 };
  }

  inc(...args: [L] extends [never] ? [amount?: number] : [labels: LabelValues<L>, amount?: number]): void {
    const [labels, amount] = (this.labelNames.length === 0 ? [undefined, args[0]] : args) as [
      LabelValues<L> | undefined,
      number | undefined,
    ];
    const by = amount ?? 1;
    if (!(by >= 0)) throw new Error(`${this.name}: a counter cannot decrease`);
    this.seriesFor(labels).value += by;
  }

  /** The current value of one series (0 when it does not exist yet). */
  get(labels?: LabelValues<L>): number {
    return this.existing(labels)?.value ?? 0;
  }

  protected sampleLines(labels: Array<[string, string]>, state: { value: number }): string[] {
    return [`${this.name}${labelText(labels)} ${formatNumber(state.value)}`];
  }
}

/** A value that goes up and down. */
export class Gauge<L extends string = never> extends Metric<L, { value: number }> {
  readonly type = 'gauge';

  constructor(options: MetricOptions<L>) {
    super(options);
    if (this.labelNames.length === 0) this.seriesFor(undefined);
  }

  protected initialState() {
    return { value: 0 };
  }

  set(...args: [L] extends [never] ? [value: number] : [labels: LabelValues<L>, value: number]): void {
    const [labels, value] = (this.labelNames.length === 0 ? [undefined, args[0]] : args) as [
      LabelValues<L> | undefined,
      number,
    ];
    if (Number.isNaN(value)) throw new Error(`${this.name}: cannot set NaN`);
    this.seriesFor(labels).value = value;
  }

  get(labels?: LabelValues<L>): number {
    return this.existing(labels)?.value ?? 0;
  }

  protected sampleLines(labels: Array<[string, string]>, state: { value: number }): string[] {
    return [`${this.name}${labelText(labels)} ${formatNumber(state.value)}`];
  }
}

interface HistogramState {
  counts: number[];
  sum: number;
  count: number;
}

/** Observations counted into cumulative buckets, with their sum and count. */
export class Histogram<L extends string = never> extends Metric<L, HistogramState> {
  readonly type = 'histogram';
  readonly buckets: readonly number[];

  constructor(options: MetricOptions<L> & { buckets?: readonly number[] }) {
    super(options);
    if ((this.labelNames as readonly string[]).includes('le'))
      throw new Error('"le" is reserved in histograms');
    const buckets = [...(options.buckets ?? DEFAULT_BUCKETS)].sort((a, b) => a - b);
    if (buckets.length === 0 || buckets.some((b) => !Number.isFinite(b))) {
      throw new Error(`${this.name}: buckets must be finite numbers`);
    }
    this.buckets = buckets;
    if (this.labelNames.length === 0) this.seriesFor(undefined);
  }

  protected initialState(): HistogramState {
    return { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
  }

  observe(...args: [L] extends [never] ? [value: number] : [labels: LabelValues<L>, value: number]): void {
    const [labels, value] = (this.labelNames.length === 0 ? [undefined, args[0]] : args) as [
      LabelValues<L> | undefined,
      number,
    ];
    if (!Number.isFinite(value)) throw new Error(`${this.name}: cannot observe ${value}`);
    const state = this.seriesFor(labels);
    // Buckets are stored non-cumulative and summed when rendered: one increment per observation.
    const index = this.buckets.findIndex((bound) => value <= bound);
    if (index !== -1) state.counts[index]! += 1;
    state.sum += value;
    state.count += 1;
  }

  /** Number of observations of one series. */
  count(labels?: LabelValues<L>): number {
    return this.existing(labels)?.count ?? 0;
  }

  protected sampleLines(labels: Array<[string, string]>, state: HistogramState): string[] {
    const lines: string[] = [];
    let cumulative = 0;
    this.buckets.forEach((bound, i) => {
      cumulative += state.counts[i]!;
      lines.push(`${this.name}_bucket${labelText([...labels, ['le', formatNumber(bound)]])} ${cumulative}`);
    });
    lines.push(`${this.name}_bucket${labelText([...labels, ['le', '+Inf']])} ${state.count}`);
    lines.push(`${this.name}_sum${labelText(labels)} ${formatNumber(state.sum)}`);
    lines.push(`${this.name}_count${labelText(labels)} ${state.count}`);
    return lines;
  }
}

/** Holds metrics by name and renders them all for one scrape. */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric<string, unknown>>();

  register<M extends Metric<string, unknown>>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} is already registered`);
    this.metrics.set(metric.name, metric);
    return metric;
  }

  /** The whole exposition: every metric's HELP, TYPE and samples, ending in a line feed. */
  render(): string {
    return `${[...this.metrics.values()].map((m) => m.render()).join('\n')}\n`;
  }
}
