/** One run of the benchmark as the report renders it: every part's result, and the machine it ran on. */
import { table } from './report-format.ts';
import type {
  AuthorizerResult,
  Bundle,
  ColdStartResult,
  CompareResult,
  FloorBundle,
  GrantResult,
  ImportBenchResult,
  LoadResult,
  LoginResult,
  PlatformResult,
  RoundTripsResult,
} from './results.ts';

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly commit: string;
}

export interface BenchResults {
  readonly date: Date;
  readonly quick: boolean;
  readonly seconds: number;
  readonly machine: Machine;
  readonly authorizer: readonly AuthorizerResult[];
  readonly login: readonly LoginResult[];
  readonly compare: CompareResult;
  readonly grant: GrantResult;
  readonly platform: PlatformResult;
  readonly roundTrips: RoundTripsResult;
  readonly bundles: readonly Bundle[];
  readonly floors: readonly FloorBundle[];
  readonly coldStart: ColdStartResult;
  readonly load: LoadResult;
  readonly bulkImport: ImportBenchResult;
}

/** The machine's table, at the head of the report: the figures are only as good as it. */
export function machineTable(machine: Machine): string {
  return table(
    ['Machine', ''],
    [
      ['CPU', `${machine.cpu} × ${machine.cores}`],
      ['Memory', `${machine.memoryGiB.toFixed(1)} GiB`],
      ['OS', machine.os],
      ['Node.js', machine.node],
      ['Commit', machine.commit],
    ],
  );
}
