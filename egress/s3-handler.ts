import { Readable } from 'node:stream';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { egressRequest, type EgressPolicy } from './request';

type RequestHandler = Extract<NonNullable<S3ClientConfig['requestHandler']>, { handle: unknown }>;
type SdkRequest = Parameters<RequestHandler['handle']>[0];

/**
 * The AWS SDK's HTTP handler over `egressRequest`, so an S3 client pointed at a tenant's endpoint
 * leaves through the one path: the address guard on the addresses really used (unless the policy
 * allows private ones), no redirects, bounded answers and time (docs/egress.md). Uploads stream
 * their body; answers (S3's small XML, or an object read back) are read up to the policy's bound.
 */
export function egressS3Handler(policy: EgressPolicy): RequestHandler {
  const handler = {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle(request: SdkRequest, options?: { abortSignal?: AbortSignal }) {
      const query = Object.entries(request.query ?? {}).flatMap(([k, v]) =>
        v === null || v === undefined
          ? [encodeURIComponent(k)]
          : (Array.isArray(v) ? v : [v]).map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(x)}`),
      );
      const port = request.port ? `:${request.port}` : '';
      const url = `${request.protocol}//${request.hostname}${port}${request.path}${query.length ? `?${query.join('&')}` : ''}`;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(request.headers)) headers[k] = String(v);
      const body = request.body as unknown;
      const answer = await egressRequest(
        url,
        {
          method: request.method,
          headers,
          body:
            body === undefined || body === null
              ? undefined
              : typeof body === 'string' || Buffer.isBuffer(body)
                ? body
                : body instanceof Uint8Array
                  ? Buffer.from(body.buffer, body.byteOffset, body.byteLength)
                  : (body as NodeJS.ReadableStream),
          signal: options?.abortSignal as AbortSignal | undefined,
        },
        policy,
      );
      const responseHeaders: Record<string, string> = {};
      for (const [k, v] of Object.entries(answer.headers))
        if (v !== undefined) responseHeaders[k] = Array.isArray(v) ? v.join(', ') : v;
      return {
        response: { statusCode: answer.status, headers: responseHeaders, body: Readable.from([answer.body]) },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
  return handler as unknown as RequestHandler;
}
