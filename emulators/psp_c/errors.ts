/**
 * Razorpay's error envelope. Every API failure answers
 * `{error: {code, description, source, step, reason, metadata, field}}`; validation
 * failures carry source/step/reason, auth failures carry "NA".
 */
export class RzpError extends Error {
  constructor(
    readonly status: number,
    readonly description: string,
    readonly opts: { code?: string; field?: string; reason?: string; source?: string; step?: string } = {},
  ) {
    super(description);
    this.name = 'RzpError';
  }

  body(): { error: Record<string, unknown> } {
    const validation = this.status === 400;
    const error: Record<string, unknown> = {
      code: this.opts.code ?? (this.status >= 500 ? 'SERVER_ERROR' : 'BAD_REQUEST_ERROR'),
      description: this.description,
      source: this.opts.source ?? (validation ? 'business' : 'NA'),
      step: this.opts.step ?? (validation ? 'payment_initiation' : 'NA'),
      reason: this.opts.reason ?? (validation ? 'input_validation_failed' : 'NA'),
      metadata: {},
    };
    if (this.opts.field) error.field = this.opts.field;
    return { error };
  }
}

export const badRequest = (description: string, field?: string) => new RzpError(400, description, { field });

/** Razorpay answers an unknown id with 400, not 404. */
export const noSuchId = () => new RzpError(400, 'The id provided does not exist', { field: 'id' });

export const authFailed = () => new RzpError(401, 'Authentication failed', { source: 'NA', step: 'NA', reason: 'NA' });
