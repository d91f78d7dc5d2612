import { describe, expect, it } from 'vitest';
import { formMessage } from '../../api/dashboard/form-message';

describe('formMessage: an operation refusal as a form shows it', () => {
  it('gives the first problem as its own sentence, without the field the API names', () => {
    expect(
      formMessage({
        error: 'scopes: Choose at least one scope.; name: Names are at most 100 characters.',
        param: 'scopes',
      }),
    ).toBe('Choose at least one scope.');
    expect(
      formMessage({
        error: 'default_sku: The default product must be one of the listed products.',
        param: 'default_sku',
      }),
    ).toBe('The default product must be one of the listed products.');
  });

  it('leaves a refusal that names no field, or another one, as it is', () => {
    expect(formMessage({ error: 'No such key.' })).toBe('No such key.');
    expect(formMessage({ error: 'No product with SKU a, b in your catalogue.', param: 'skus' })).toBe(
      'No product with SKU a, b in your catalogue.',
    );
    expect(formMessage({ error: 'unknown parameter "x"', param: 'x' })).toBe('unknown parameter "x"');
  });
});
