import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';

/** A page Astro rendered, held in memory so the front server decides how it is sent. */
export interface RenderedPage {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface AstroRenderer {
  /** Renders an on-demand page; undefined when no Astro route matches the path. */
  render(pathname: string, locals: Record<string, unknown>): Promise<RenderedPage | undefined>;
}

type AstroHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next: () => void,
  locals: Record<string, unknown>,
) => Promise<void>;

/**
 * Collects what Astro's node handler writes. Astro streams straight into a ServerResponse and,
 * when rendering fails, writes a bare 500 itself; rendering into this collector instead lets the
 * front server add its headers and turn such failures into problem documents.
 */
class CollectedResponse extends EventEmitter {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  readonly headers: Record<string, string> = {};
  readonly chunks: Buffer[] = [];

  setHeader(name: string, value: number | string | readonly string[]): this {
    this.headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    return this;
  }
  getHeader(name: string): string | undefined {
    return this.headers[name.toLowerCase()];
  }
  writeHead(
    status: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders,
    maybeHeaders?: OutgoingHttpHeaders,
  ): this {
    this.statusCode = status;
    const headers = typeof reasonOrHeaders === 'object' ? reasonOrHeaders : maybeHeaders;
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (value !== undefined) this.setHeader(name, Array.isArray(value) ? value : String(value));
    }
    this.headersSent = true;
    return this;
  }
  write(chunk: string | Uint8Array, callback?: () => void): boolean {
    this.chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
    callback?.();
    return true;
  }
  end(chunk?: string | Uint8Array | (() => void)): this {
    if (chunk !== undefined && typeof chunk !== 'function') this.write(chunk);
    this.headersSent = true;
    this.emit('finish');
    return this;
  }
  destroy(): this {
    this.statusCode = 500;
    return this;
  }
}

/**
 * Loads Astro's server build (`dist/server/entry.mjs`, node adapter in middleware mode). Missing
 * build → undefined, and the pages that need it answer 502 instead of the server not starting.
 */
export async function loadAstroRenderer(
  entryPath: string,
  onError: (message: string) => void = () => {},
): Promise<AstroRenderer | undefined> {
  if (!existsSync(entryPath)) {
    onError(`the server build ${entryPath} is missing; share pages answer 502 until the site is rebuilt`);
    return undefined;
  }
  let handler: AstroHandler | undefined;
  try {
    const entry = (await import(pathToFileURL(entryPath).href)) as { handler?: AstroHandler };
    handler = entry.handler;
  } catch (error) {
    onError(
      `the server build ${entryPath} could not be loaded: ${error instanceof Error ? error.message : error}`,
    );
    return undefined;
  }
  if (typeof handler !== 'function') {
    onError(`the server build ${entryPath} exports no handler (is the node adapter in middleware mode?)`);
    return undefined;
  }
  return {
    async render(pathname, locals) {
      // Astro sees a clean GET of the path and nothing of the client's headers: on-demand pages
      // render from `locals` only, and hostile Host or X-Forwarded-* values never reach it.
      const req = {
        method: 'GET',
        url: pathname,
        headers: { accept: 'text/html' },
        socket: { encrypted: false, remoteAddress: '127.0.0.1' },
      } as unknown as IncomingMessage;
      const res = new CollectedResponse();
      let matched = true;
      await handler!(
        req,
        res as unknown as ServerResponse,
        () => {
          matched = false;
        },
        locals,
      );
      if (!matched) return undefined;
      return { status: res.statusCode, headers: res.headers, body: Buffer.concat(res.chunks) };
    },
  };
}
