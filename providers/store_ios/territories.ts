/**
 * App Store Connect names territories by ISO 3166-1 alpha-3 code (USA, GBR, …) while our
 * pricing rows use alpha-2. This is the App Store's storefront list, alpha-2 → alpha-3.
 */
const PAIRS =
  'AE:ARE AF:AFG AG:ATG AI:AIA AL:ALB AM:ARM AO:AGO AR:ARG AT:AUT AU:AUS AZ:AZE BA:BIH BB:BRB BD:BGD BE:BEL ' +
  'BF:BFA BG:BGR BH:BHR BJ:BEN BM:BMU BN:BRN BO:BOL BR:BRA BS:BHS BT:BTN BW:BWA BY:BLR BZ:BLZ CA:CAN CD:COD ' +
  'CG:COG CH:CHE CI:CIV CL:CHL CM:CMR CN:CHN CO:COL CR:CRI CV:CPV CY:CYP CZ:CZE DE:DEU DK:DNK DM:DMA DO:DOM ' +
  'DZ:DZA EC:ECU EE:EST EG:EGY ES:ESP FI:FIN FJ:FJI FM:FSM FR:FRA GA:GAB GB:GBR GD:GRD GE:GEO GH:GHA GM:GMB ' +
  'GR:GRC GT:GTM GW:GNB GY:GUY HK:HKG HN:HND HR:HRV HU:HUN ID:IDN IE:IRL IL:ISR IN:IND IQ:IRQ IS:ISL IT:ITA ' +
  'JM:JAM JO:JOR JP:JPN KE:KEN KG:KGZ KH:KHM KN:KNA KR:KOR KW:KWT KY:CYM KZ:KAZ LA:LAO LB:LBN LC:LCA LK:LKA ' +
  'LR:LBR LT:LTU LU:LUX LV:LVA LY:LBY MA:MAR MD:MDA ME:MNE MG:MDG MK:MKD ML:MLI MM:MMR MN:MNG MO:MAC MR:MRT ' +
  'MS:MSR MT:MLT MU:MUS MV:MDV MW:MWI MX:MEX MY:MYS MZ:MOZ NA:NAM NE:NER NG:NGA NI:NIC NL:NLD NO:NOR NP:NPL ' +
  'NR:NRU NZ:NZL OM:OMN PA:PAN PE:PER PG:PNG PH:PHL PK:PAK PL:POL PT:PRT PW:PLW PY:PRY QA:QAT RO:ROU RS:SRB ' +
  'RU:RUS RW:RWA SA:SAU SB:SLB SC:SYC SE:SWE SG:SGP SI:SVN SK:SVK SL:SLE SN:SEN SR:SUR ST:STP SV:SLV SZ:SWZ ' +
  'TC:TCA TD:TCD TH:THA TJ:TJK TM:TKM TN:TUN TO:TON TR:TUR TT:TTO TW:TWN TZ:TZA UA:UKR UG:UGA US:USA UY:URY ' +
  'UZ:UZB VC:VCT VE:VEN VG:VGB VN:VNM VU:VUT XK:XKS YE:YEM ZA:ZAF ZM:ZMB ZW:ZWE';

const ALPHA3 = new Map(PAIRS.split(' ').map((p) => p.split(':') as [string, string]));

export function territoryFor(country: string): string | undefined {
  return ALPHA3.get(country.toUpperCase());
}

const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'ISK',
  'JPY',
  'KMF',
  'KRW',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
const THREE_DECIMAL = new Set(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']);

/** ISO 4217 minor-unit exponent, the unit our amount_minor is counted in. */
export function currencyExponent(currency: string): number {
  const c = currency.toUpperCase();
  if (ZERO_DECIMAL.has(c)) return 0;
  if (THREE_DECIMAL.has(c)) return 3;
  return 2;
}

/** App Store customerPrice strings ("4.99", "1200") in our minor units. */
export function toMinor(customerPrice: string, currency: string): number {
  return Math.round(Number(customerPrice) * 10 ** currencyExponent(currency));
}
