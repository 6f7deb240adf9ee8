/** Memory. Today this holds the memory metric of spec §4, registered so it is scraped from the start. */
export { createMemoryMetrics, type MemoryMetrics } from './metrics.ts';
