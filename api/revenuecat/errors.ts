import type Koa from 'koa';
import { RC_ERROR } from '../../domain/revenuecat';
import { ApiError, toApiError } from '../../operations/errors';

/**
 * RevenueCat's error body, `{"code": N, "message": "…"}`, with the backend codes its SDKs branch
 * on (domain/revenuecat.ts RC_ERROR); the HTTP status stays ours. Every refusal under
 * /revenuecat is rendered so, whatever raised it.
 */
export function revenuecatCode(e: ApiError): number {
  switch (e.code) {
    case 'invalid_api_key':
      return RC_ERROR.invalidApiKey;
    case 'rate_limited':
      return RC_ERROR.tooManyRequests;
    case 'purchase_token_reused':
      return RC_ERROR.cannotTransferPurchase;
    case 'purchase_not_found':
    case 'invalid_purchase':
      return RC_ERROR.invalidReceiptToken;
    case 'store_unavailable':
    case 'purchase_pending':
      return RC_ERROR.storeProblem;
    case 'invalid_platform':
      return RC_ERROR.invalidPlatform;
    case 'invalid_subscriber_attributes':
      return RC_ERROR.invalidSubscriberAttributes;
    case 'invalid_request': {
      const param = e.extra.param;
      if (param === 'app_user_id' || param === 'new_app_user_id') return RC_ERROR.emptyAppUserId;
      if (param === 'product_ids') return RC_ERROR.productIdForGoogleReceiptNotProvided;
      if (param === 'attributes') return RC_ERROR.invalidSubscriberAttributesBody;
      return RC_ERROR.badRequest;
    }
    default:
      return e.status >= 500 ? RC_ERROR.internalServerError : RC_ERROR.badRequest;
  }
}

export function revenuecatErrors(): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const e = toApiError(err, ctx.state.log);
      ctx.status = e.status;
      for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
      ctx.body = { code: revenuecatCode(e), message: e.detail ?? e.code };
    }
  };
}
