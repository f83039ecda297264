import { describe, expect, it } from 'vitest';
import {
  BIRD_MINIDEV_V1,
  BUILTIN_TEMPLATES,
  REASONING_V1,
  findTemplate,
  renderTemplateText,
  templateFingerprint,
  templateProblems,
  type PromptTemplate,
} from '../../src/core/prompt/templates.ts';

const values = { schema: 'S', question: 'Q?', evidence: '', dialect: 'SQLite' };

describe('prompt templates', () => {
  it('substitutes variables and keeps sections by whether their value is empty', () => {
    const t = 'A {{question}}{{#evidence}} E={{evidence}}{{/evidence}}{{^evidence}} none{{/evidence}}.';
    expect(renderTemplateText(t, values)).toBe('A Q? none.');
    expect(renderTemplateText(t, { ...values, evidence: 'x' })).toBe('A Q? E=x.');
  });

  it('treats whitespace-only evidence as present, as Python truthiness does', () => {
    expect(renderTemplateText('{{#evidence}}[{{evidence}}]{{/evidence}}', { ...values, evidence: ' ' })).toBe('[ ]');
  });

  it('nests sections', () => {
    expect(renderTemplateText('{{#question}}a{{#evidence}}b{{/evidence}}c{{/question}}', values)).toBe('ac');
  });

  it('ships bird-minidev-v1 and reasoning-v1 as valid templates', () => {
    expect(BUILTIN_TEMPLATES.map((t) => t.id)).toEqual(['bird-minidev-v1', 'reasoning-v1']);
    for (const t of BUILTIN_TEMPLATES) expect(templateProblems(t)).toEqual([]);
    expect(findTemplate('reasoning-v1')).toBe(REASONING_V1);
    expect(findTemplate('nope')).toBeUndefined();
  });

  it('explains what is wrong with an edited template', () => {
    const bad: PromptTemplate = {
      ...BIRD_MINIDEV_V1,
      id: 'Mine',
      user: '{{schema}} {{#evidence}}{{evidnce}}',
      sampleRows: -1,
    };
    expect(templateProblems(bad)).toEqual([
      'id "Mine" must be lower-case and end in a version, e.g. my-template-v1',
      'sampleRows must be an integer from 0 to 100',
      'user: unknown variable {{evidnce}} (known: schema, question, evidence, dialect)',
      'user: section {{#evidence}} is never closed',
      'user: the template never shows {{question}}',
    ]);
  });

  it('fingerprints the content, so an edited template under the same id is detectable', () => {
    expect(templateFingerprint(REASONING_V1)).toBe(templateFingerprint({ ...REASONING_V1 }));
    expect(templateFingerprint({ ...REASONING_V1, user: `${REASONING_V1.user} ` })).not.toBe(
      templateFingerprint(REASONING_V1),
    );
  });
});
