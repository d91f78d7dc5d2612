/** Time fields as the API writes them. */
export const iso = (d: Date | string | null | undefined): string | null => (d ? new Date(d).toISOString() : null);
export const isoReq = (d: Date | string): string => new Date(d).toISOString();
