/**
 * Stripe's error shape: `{"error": {"type", "message", "code"?, "param"?, "doc_url"?}}`.
 * Thrown by handlers and rendered by the API middleware.
 */
export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: 'invalid_request_error' | 'api_error' | 'idempotency_error' | 'card_error' | 'rate_limit_error',
    message: string,
    readonly code?: string,
    readonly param?: string,
  ) {
    super(message);
  }

  toBody(): { error: Record<string, string> } {
    const error: Record<string, string> = { message: this.message, type: this.type };
    if (this.code) {
      error.code = this.code;
      error.doc_url = `https://stripe.com/docs/error-codes/${this.code.replace(/_/g, '-')}`;
    }
    if (this.param) error.param = this.param;
    return { error };
  }
}

export const missingParam = (param: string) =>
  new StripeApiError(400, 'invalid_request_error', `Missing required param: ${param}.`, 'parameter_missing', param);

export const unknownParam = (param: string) =>
  new StripeApiError(400, 'invalid_request_error', `Received unknown parameter: ${param}`, 'parameter_unknown', param);

export const invalidParam = (param: string, message: string, code = 'parameter_invalid_empty') =>
  new StripeApiError(400, 'invalid_request_error', message, code, param);

export const noSuch = (what: string, id: string, param = 'id') =>
  new StripeApiError(404, 'invalid_request_error', `No such ${what}: '${id}'`, 'resource_missing', param);

export const unrecognizedUrl = (method: string, path: string) =>
  new StripeApiError(
    404,
    'invalid_request_error',
    `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
  );
