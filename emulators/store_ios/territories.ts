/**
 * App Store territories (alpha-3, as App Store Connect names them) and the currency each
 * storefront sells in. Territories without a local-currency storefront sell in USD.
 */
const LOCAL: Record<string, string> = {
  USA: 'USD',
  CAN: 'CAD',
  MEX: 'MXN',
  BRA: 'BRL',
  COL: 'COP',
  CHL: 'CLP',
  PER: 'PEN',
  GBR: 'GBP',
  CHE: 'CHF',
  NOR: 'NOK',
  SWE: 'SEK',
  DNK: 'DKK',
  POL: 'PLN',
  CZE: 'CZK',
  HUN: 'HUF',
  ROU: 'RON',
  BGR: 'BGN',
  TUR: 'TRY',
  RUS: 'RUB',
  ISR: 'ILS',
  ARE: 'AED',
  SAU: 'SAR',
  QAT: 'QAR',
  EGY: 'EGP',
  ZAF: 'ZAR',
  NGA: 'NGN',
  KEN: 'KES',
  TZA: 'TZS',
  PAK: 'PKR',
  IND: 'INR',
  IDN: 'IDR',
  MYS: 'MYR',
  PHL: 'PHP',
  SGP: 'SGD',
  THA: 'THB',
  VNM: 'VND',
  CHN: 'CNY',
  HKG: 'HKD',
  TWN: 'TWD',
  JPN: 'JPY',
  KOR: 'KRW',
  AUS: 'AUD',
  NZL: 'NZD',
  KAZ: 'KZT',
};
const EURO = 'AUT BEL CYP DEU ESP EST FIN FRA GRC HRV IRL ITA LTU LUX LVA MLT NLD PRT SVK SVN'.split(' ');
const USD_ONLY = (
  'AFG AGO AIA ALB ARG ARM ATG AZE BHR BHS BIH BLR BLZ BMU BOL BRB BRN BTN BWA CIV CMR COD COG CPV CRI CYM ' +
  'DMA DOM DZA ECU FJI FSM GAB GEO GHA GMB GNB GRD GTM GUY HND IRQ ISL JAM JOR KGZ KHM KNA KWT LAO LBN LBR LBY ' +
  'LCA LKA MAC MAR MDA MDG MDV MKD MLI MMR MNE MNG MOZ MRT MSR MUS MWI NAM NER NIC NPL NRU OMN PAN PLW PNG PRY ' +
  'RWA SEN SLB SLE SLV SRB STP SUR SWZ SYC TCA TCD TJK TKM TON TTO TUN UGA UKR URY UZB VCT VEN VGB VUT XKS YEM ZMB ZWE BFA BEN'
).split(' ');

export const TERRITORY_CURRENCY: Record<string, string> = {
  ...Object.fromEntries(USD_ONLY.map((t) => [t, 'USD'])),
  ...Object.fromEntries(EURO.map((t) => [t, 'EUR'])),
  ...LOCAL,
};

export function currencyOf(territory: string): string | undefined {
  return TERRITORY_CURRENCY[territory];
}

const ZERO_DECIMAL = new Set(['CLP', 'JPY', 'KRW', 'VND']);

export function exponentOf(currency: string): number {
  return ZERO_DECIMAL.has(currency) ? 0 : 2;
}
