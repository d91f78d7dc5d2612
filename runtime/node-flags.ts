/**
 * V8 flags for our long-running node processes (the api, the inbound and the outbound worker),
 * as `npm start`, the image and the compose file start them, and as the webhook benchmarks do.
 *
 * `--single-threaded-gc`: the garbage collector works on the thread that allocated instead of
 * handing parts of every collection to V8's helper threads. Our processes allocate in small,
 * short-lived pieces (a request, a workflow activation), so most collections are young-generation
 * scavenges of a few MB, where splitting the work costs more in synchronisation than it saves; on
 * a machine whose cores are all busy the helpers also wait for a core. Measured in
 * bench/payment-to-premium.ts (bench/RESULTS.md, "CPU per purchase").
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--single-threaded-gc'];
