import { Model } from 'objection';

/**
 * Base of every objection model. Models are never bound to a knex instance (no Model.knex()):
 * a bound model would run `Product.query()` on the pool, outside the tenant transaction — as
 * the login role with no tenant it is refused or silently reads nothing (as the owner, in the
 * admin CLI, it would bypass RLS). Left
 * unbound, objection itself refuses a query that was not handed a transaction ("no database
 * connection available"), so every query is `Product.query(trx)` with the transaction of
 * db/tenant-tx.ts, and relation fetches inherit that transaction from their parent query.
 *
 * Rows keep the columns' snake_case names, like the plain knex paths, so the serializers read
 * model instances and knex rows alike.
 */
export class BaseModel extends Model {}
