import { describe, expect, it } from 'vitest';
import {
  BEGIN,
  code,
  END,
  type Equivalent,
  folderOf,
  type MutantResult,
  type MutationReport,
  originalText,
  render,
  score,
  splice,
  tally,
} from '../../dev/mutation-report.ts';

const SOURCE = 'export const ok = (a: number) => a > 0;\nexport const name = `x`;\n';

function mutant(
  id: string,
  status: MutantResult['status'],
  line = 1,
  extra: Partial<MutantResult> = {},
): MutantResult {
  return {
    id,
    mutatorName: 'EqualityOperator',
    replacement: 'a >= 0',
    location: { start: { line, column: 34 }, end: { line, column: 39 } },
    status,
    ...extra,
  };
}

const report = (files: Record<string, readonly MutantResult[]>): MutationReport => ({
  files: Object.fromEntries(
    Object.entries(files).map(([file, mutants]) => [file, { source: SOURCE, mutants }]),
  ),
});

const EQUIVALENT: Equivalent = {
  file: 'lib/tokens/verify.ts',
  mutator: 'EqualityOperator',
  original: 'a > 0',
  replacement: 'a >= 0',
  reason: 'a is never 0 here',
};

describe('mutation report', () => {
  it('reads the code a mutant replaced from 1-based lines and columns, the end exclusive', () => {
    // Arrange
    const location = mutant('1', 'Survived').location;

    // Act
    const original = originalText(SOURCE, location);

    // Assert
    expect(original).toBe('a > 0');
  });

  it('reports files directly in lib/ together and every other file under its folder', () => {
    // Arrange
    const files = ['lib/config.ts', 'lib/auth/login.ts', 'ops/admin.ts'];

    // Act
    const folders = files.map(folderOf);

    // Assert
    expect(folders).toEqual(['lib/*.ts', 'lib/auth', undefined]);
  });

  it('scores killed and timed-out mutants as detected, ignored and erroneous ones as neither', () => {
    // Arrange
    const mutants = [
      mutant('1', 'Killed'),
      mutant('2', 'Timeout'),
      mutant('3', 'Survived'),
      mutant('4', 'NoCoverage'),
      mutant('5', 'Ignored'),
      mutant('6', 'CompileError'),
    ];

    // Act
    const result = score(tally(mutants));

    // Assert
    expect(result).toBe(50);
  });

  it('calls the total of a run on some folders what it is, not lib/ as a whole', () => {
    // Arrange
    const critical = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed')] });

    // Act
    const { block } = render(critical, []);

    // Assert
    expect(block).toContain('| **the files this run mutated** | 1 |');
    expect(block).not.toContain('lib/ as a whole');
    expect(block).toMatch(/\| `lib\/metrics` \| 0 \|.*\| n\/a \| n\/a \|/);
  });

  it('gives the reason recorded for a survivor of lib/tokens and reports none missing', () => {
    // Arrange
    const input = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed'), mutant('2', 'Survived')] });

    // Act
    const { block, unexplained, stale } = render(input, [EQUIVALENT]);

    // Assert
    expect({ unexplained, stale }).toEqual({ unexplained: [], stale: [] });
    expect(block).toContain(
      '| lib/tokens/verify.ts:1:34 | EqualityOperator | `a > 0` | `a >= 0` | Survived | a is never 0 here |',
    );
  });

  it('lists a survivor of a DynamoDB adapter without a recorded reason as not yet explained', () => {
    // Arrange
    const input = report({
      'lib/accounts/dynamodb.ts': [mutant('1', 'Survived')],
      'lib/accounts/dynamodb-users.ts': [mutant('2', 'Survived')],
    });

    // Act
    const { block, unexplained } = render(input, []);

    // Assert
    expect(unexplained.map((m) => m.file)).toEqual([
      'lib/accounts/dynamodb-users.ts',
      'lib/accounts/dynamodb.ts',
    ]);
    expect(block).toContain('**not yet explained**');
  });

  it('does not ask for reasons for survivors outside lib/auth, lib/tokens and the adapters', () => {
    // Arrange
    const input = report({ 'ops/accounts/import.ts': [mutant('1', 'Survived')] });

    // Act
    const { unexplained } = render(input, []);

    // Assert
    expect(unexplained).toEqual([]);
  });

  it('gives a reason that names a line only to the survivor on a line containing it', () => {
    // Arrange: the same code on two lines, both mutated the same way.
    const source = 'export const ok = (a: number) => a > 0;\nexport const up = (a: number) => a > 0;\n';
    const input: MutationReport = {
      files: {
        'lib/tokens/verify.ts': { source, mutants: [mutant('1', 'Survived'), mutant('2', 'Survived', 2)] },
      },
    };

    // Act
    const { unexplained } = render(input, [{ ...EQUIVALENT, line: 'const ok =' }]);

    // Assert
    expect(unexplained.map((m) => m.location.start.line)).toEqual([2]);
  });

  it('calls a recorded reason stale once its mutant is killed', () => {
    // Arrange
    const input = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed')] });

    // Act
    const { stale } = render(input, [EQUIVALENT]);

    // Assert
    expect(stale).toEqual([EQUIVALENT]);
  });

  it('replaces only the generated block of the document and keeps the prose around it', () => {
    // Arrange
    const document = `# Title\n\nProse.\n\n${BEGIN}\nold\n${END}\n\nAfter.\n`;

    // Act
    const result = splice(document, `${BEGIN}\nnew\n${END}`);

    // Assert
    expect(result).toBe(`# Title\n\nProse.\n\n${BEGIN}\nnew\n${END}\n\nAfter.\n`);
  });

  it('appends the block to a document that has none yet', () => {
    // Arrange
    const document = '# Mutation testing\n';

    // Act
    const result = splice(document, `${BEGIN}\nnew\n${END}`);

    // Assert
    expect(result).toBe(`# Mutation testing\n\n${BEGIN}\nnew\n${END}\n`);
  });

  it('fences code containing backticks and escapes pipes so a table cell stays one cell', () => {
    // Arrange
    const text = '`a` | b';

    // Act
    const span = code(text);

    // Assert
    expect(span).toBe('`` `a` \\| b ``');
  });
});
