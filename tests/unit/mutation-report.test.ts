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

/** Every folder the reports below mutate: a run on all of them. */
const FOLDERS = ['lib/accounts', 'lib/tokens'];

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

  it('calls the total of a run on some folders what it is, and names the folders it left out', () => {
    // Arrange
    const critical = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed')] });

    // Act
    const { block } = render(critical, [], ['lib/metrics', 'lib/tokens']);

    // Assert
    expect(block).toContain('| **the files this run mutated** | 1 |');
    expect(block).not.toContain('lib/ as a whole');
    expect(block).toContain('Not mutated by this run: `lib/metrics`.');
  });

  it('calls the total of a run on every folder lib/ as a whole', () => {
    // Arrange
    const whole = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed')] });

    // Act
    const { block } = render(whole, [], ['lib/tokens']);

    // Assert
    expect(block).toContain('| **lib/ as a whole** | 1 | 1 | 0 | 0 | 0 | 0 | 100.00 | 100.00 |');
    expect(block).not.toContain('Not mutated');
  });

  it('gives a folder of several files a bold row of their sum before its files, and a lone file only its own', () => {
    // Arrange
    const input = report({
      'lib/auth/login.ts': [mutant('1', 'Killed')],
      'lib/auth/passwords.ts': [mutant('2', 'Survived')],
      'lib/tokens/verify.ts': [mutant('3', 'Timeout')],
    });

    // Act
    const rows = render(input, [], ['lib/auth', 'lib/tokens'])
      .block.split('\n')
      .filter((line) => line.startsWith('| `') || line.startsWith('| **'));

    // Assert
    expect(rows).toEqual([
      '| **`lib/auth`** | 2 | 1 | 0 | 1 | 0 | 0 | 50.00 | 50.00 |',
      '| `lib/auth/login.ts` | 1 | 1 | 0 | 0 | 0 | 0 | 100.00 | 100.00 |',
      '| `lib/auth/passwords.ts` | 1 | 0 | 0 | 1 | 0 | 0 | 0.00 | 0.00 |',
      '| `lib/tokens/verify.ts` | 1 | 0 | 1 | 0 | 0 | 0 | 100.00 | 100.00 |',
      '| **lib/ as a whole** | 3 | 1 | 1 | 1 | 0 | 0 | 66.67 | 66.67 |',
    ]);
  });

  it('shows an errors column only when some mutant errored, and says none did otherwise', () => {
    // Arrange
    const clean = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed')] });
    const erred = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed'), mutant('2', 'CompileError')] });

    // Act
    const [without, withErrors] = [clean, erred].map((input) => render(input, [], ['lib/tokens']).block);

    // Assert
    expect(without).toContain('No mutant errored.');
    expect(without).not.toContain('| errors |');
    expect(withErrors).toContain('| **lib/ as a whole** | 2 | 1 | 0 | 0 | 0 | 0 | 1 | 100.00 | 100.00 |');
  });

  it('marks a survivor of lib/tokens whose reason is recorded as equivalent, and reports none missing', () => {
    // Arrange
    const input = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed'), mutant('2', 'Survived')] });

    // Act
    const { block, unexplained, stale } = render(input, [EQUIVALENT], FOLDERS);

    // Assert
    expect({ unexplained, stale }).toEqual({ unexplained: [], stale: [] });
    expect(block).toContain(
      '**`lib/tokens/verify.ts`**\n\n- 1:34 `a > 0` EqualityOperator → `a >= 0`, *equivalent*\n',
    );
  });

  it('lists a survivor of a DynamoDB adapter without a recorded reason as not yet explained', () => {
    // Arrange
    const input = report({
      'lib/accounts/dynamodb.ts': [mutant('1', 'Survived')],
      'lib/accounts/dynamodb-users.ts': [mutant('2', 'Survived')],
    });

    // Act
    const { block, unexplained } = render(input, [], FOLDERS);

    // Assert
    expect(unexplained.map((m) => m.file)).toEqual([
      'lib/accounts/dynamodb-users.ts',
      'lib/accounts/dynamodb.ts',
    ]);
    expect(block).toContain('2 mutants no test detected, 2 not yet explained');
    expect(block).toContain('- 1:34 `a > 0` EqualityOperator → `a >= 0`\n');
  });

  it('leaves out a replacement that is the mutator’s usual one, and marks a mutant no test covers', () => {
    // Arrange
    const input = report({
      'lib/tokens/verify.ts': [
        mutant('1', 'NoCoverage', 1, { mutatorName: 'ArrowFunction', replacement: '() => undefined' }),
        mutant('2', 'Ignored', 2, {
          mutatorName: 'StringLiteral',
          replacement: '""',
          location: { start: { line: 2, column: 21 }, end: { line: 2, column: 24 } },
        }),
      ],
    });

    // Act
    const { block } = render(input, [], FOLDERS);

    // Assert
    expect(block).toContain('- 1:34 `a > 0` ArrowFunction, *no coverage*\n');
    expect(block.slice(block.indexOf('<details>'))).toContain(
      '**`lib/tokens/verify.ts`**\n\n- StringLiteral: 2:21 `` `x` ``\n',
    );
  });

  it('lists the code once for the mutants of the same code, each with its own replacement', () => {
    // Arrange
    const input = report({
      'lib/tokens/verify.ts': [
        mutant('1', 'Survived'),
        mutant('2', 'NoCoverage', 1, { mutatorName: 'ConditionalExpression', replacement: 'true' }),
      ],
    });

    // Act
    const { block } = render(input, [EQUIVALENT], FOLDERS);

    // Assert
    expect(block).toContain(
      '- 1:34 `a > 0` EqualityOperator → `a >= 0`, *equivalent*; ConditionalExpression → `true`, *no coverage*\n',
    );
  });

  it('does not ask for reasons for survivors outside lib/auth, lib/tokens and the adapters', () => {
    // Arrange
    const input = report({ 'ops/accounts/import.ts': [mutant('1', 'Survived')] });

    // Act
    const { unexplained } = render(input, [], FOLDERS);

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
    const { unexplained } = render(input, [{ ...EQUIVALENT, line: 'const ok =' }], FOLDERS);

    // Assert
    expect(unexplained.map((m) => m.location.start.line)).toEqual([2]);
  });

  it('calls a recorded reason stale once its mutant is killed', () => {
    // Arrange
    const input = report({ 'lib/tokens/verify.ts': [mutant('1', 'Killed')] });

    // Act
    const { stale } = render(input, [EQUIVALENT], FOLDERS);

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

  it('fences code containing backticks and puts code of several lines on one', () => {
    // Arrange
    const text = '`a` |\n   b';

    // Act
    const span = code(text);

    // Assert
    expect(span).toBe('`` `a` | b ``');
  });
});
