/**
 * Objection models of the catalogue and subscriber resources, with the relations that earn
 * their keep (graph fetches instead of hand-written joins). Always `Model.query(trx)` with the
 * tenant transaction: see base.ts. docs/data-layer.md says how to add one.
 */
import { BaseModel } from './base';

export class Product extends BaseModel {
  static override tableName = 'products';
  declare id: string;
  declare version: number;
  declare prices?: Price[];
  declare providerRefs?: ProductProviderRef[];

  static override get relationMappings() {
    return {
      prices: {
        relation: BaseModel.HasManyRelation,
        modelClass: Price,
        join: { from: 'products.id', to: 'prices.product_id' },
      },
      providerRefs: {
        relation: BaseModel.HasManyRelation,
        modelClass: ProductProviderRef,
        join: { from: 'products.id', to: 'product_provider_refs.product_id' },
      },
    };
  }
}

export class Price extends BaseModel {
  static override tableName = 'prices';
  declare id: string;
  declare product_id: string;
  static override get relationMappings() {
    return {
      product: {
        relation: BaseModel.BelongsToOneRelation,
        modelClass: Product,
        join: { from: 'prices.product_id', to: 'products.id' },
      },
    };
  }
}

/** The provider-side object a product synced to, per provider and mode. */
export class ProductProviderRef extends BaseModel {
  static override tableName = 'product_provider_refs';
  declare product_id: string;
  declare provider: string;
  declare mode: string;
  declare external_id: string;
  declare synced_version: number;
  static override get relationMappings() {
    return {
      product: {
        relation: BaseModel.BelongsToOneRelation,
        modelClass: Product,
        join: { from: 'product_provider_refs.product_id', to: 'products.id' },
      },
    };
  }
}

export class Coupon extends BaseModel {
  static override tableName = 'coupons';
  declare id: string;
  declare counterparts?: CouponCounterpart[];
  static override get relationMappings() {
    return {
      counterparts: {
        relation: BaseModel.HasManyRelation,
        modelClass: CouponCounterpart,
        join: { from: 'coupons.id', to: 'coupon_counterparts.coupon_id' },
      },
    };
  }
}

/** A coupon's object at one provider (Stripe coupon, Paddle discount, store offer). */
export class CouponCounterpart extends BaseModel {
  static override tableName = 'coupon_counterparts';
  declare coupon_id: string;
  declare provider: string;
  static override get relationMappings() {
    return {
      coupon: {
        relation: BaseModel.BelongsToOneRelation,
        modelClass: Coupon,
        join: { from: 'coupon_counterparts.coupon_id', to: 'coupons.id' },
      },
    };
  }
}

export class Subscription extends BaseModel {
  static override tableName = 'subscriptions';
  declare id: string;
  declare entitlements?: Entitlement[];
  static override get relationMappings() {
    return {
      product: {
        relation: BaseModel.BelongsToOneRelation,
        modelClass: Product,
        join: { from: 'subscriptions.product_id', to: 'products.id' },
      },
      entitlements: {
        relation: BaseModel.HasManyRelation,
        modelClass: Entitlement,
        join: { from: 'subscriptions.id', to: 'entitlements.subscription_id' },
      },
    };
  }
}

export class Entitlement extends BaseModel {
  static override tableName = 'entitlements';
  declare id: string;
  declare state: string;
  declare subscription_id: string | null;
  declare subscription?: Subscription | null;
  static override get relationMappings() {
    return {
      product: {
        relation: BaseModel.BelongsToOneRelation,
        modelClass: Product,
        join: { from: 'entitlements.product_id', to: 'products.id' },
      },
      subscription: {
        relation: BaseModel.BelongsToOneRelation,
        modelClass: Subscription,
        join: { from: 'entitlements.subscription_id', to: 'subscriptions.id' },
      },
    };
  }
}
