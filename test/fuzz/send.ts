import http from 'node:http';

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

export interface RawRequest {
  method: string;
  /** Already percent-encoded path and query. */
  path: string;
  /** Header name → one value, or several to send the header several times. */
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** Send the body chunked (no Content-Length), so the server must count as it reads. */
  chunked?: boolean;
}

/**
 * One request over a fresh connection, sent as given: fetch would normalise what the fuzzer
 * wants to send (repeated headers, TRACE, bodies on GET, chunked uploads). A server may answer
 * a too-large upload before reading it all and close the socket; the answer counts, and the
 * write error that follows does not.
 */
export function send(base: string, req: RawRequest): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    let answered = false;
    const r = http.request(
      { host: url.hostname, port: Number(url.port), method: req.method, path: req.path, agent: false },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, body });
          r.destroy();
        });
      },
    );
    for (const [k, v] of Object.entries(req.headers)) r.setHeader(k, v);
    r.on('error', (e) => {
      if (!answered) reject(e);
    });
    if (req.body && !req.chunked) r.setHeader('content-length', String(req.body.length));
    // Node's client sends DELETE, GET, HEAD and OPTIONS bodies unframed unless told: the server
    // would read the body as a second, malformed request and answer that one first.
    if (req.body && req.chunked) r.setHeader('transfer-encoding', 'chunked');
    if (req.body) {
      // Big bodies go in 64 KiB pieces so an early answer is not stuck behind one huge write.
      const piece = 64 * 1024;
      let at = 0;
      const pump = () => {
        while (at < req.body!.length && !answered && !r.destroyed) {
          const ok = r.write(req.body!.subarray(at, at + piece));
          at += piece;
          if (!ok) return void r.once('drain', pump);
        }
        if (!r.destroyed && !answered) r.end();
      };
      pump();
    } else {
      r.end();
    }
  });
}
