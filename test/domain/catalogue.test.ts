import { describe, expect, it } from 'vitest';
import { formatMinorAmount, minorDigits, parseMajorAmount } from '../../domain/catalogue';

describe('prices typed by a person → minor units', () => {
  it.each([
    ['9.99', 'USD', 999],
    ['0.29', 'USD', 29],
    ['10', 'USD', 1000],
    ['1,200', 'JPY', 1200],
    ['0', 'EUR', 0],
    ['1.5', 'EUR', 150],
    ['12.345', 'BHD', 12345],
    [' 3.50 ', 'GBP', 350],
  ])('%s %s is %i', (text, currency, minor) => {
    expect(parseMajorAmount(text, currency)).toBe(minor);
  });

  it.each([
    ['9.999', 'USD'],
    ['12.5', 'JPY'],
    ['-1', 'USD'],
    ['1e3', 'USD'],
    ['', 'USD'],
    ['abc', 'USD'],
    ['9.9.9', 'USD'],
    ['99999999999999', 'USD'],
  ])('%s %s is refused', (text, currency) => {
    expect(parseMajorAmount(text, currency)).toBeNull();
  });

  it('round-trips through the display form', () => {
    expect(minorDigits('JPY')).toBe(0);
    expect(minorDigits('KWD')).toBe(3);
    expect(formatMinorAmount(999, 'USD')).toBe('9.99 USD');
    expect(formatMinorAmount(1200, 'JPY')).toBe('1200 JPY');
    expect(formatMinorAmount(5, 'EUR')).toBe('0.05 EUR');
  });
});
