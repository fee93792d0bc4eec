import type ts from 'typescript';

export interface ForgottenPromise {
  file: string;
  /** 1-based. */
  line: number;
  column: number;
  rule: 'floating' | 'condition' | 'expect' | 'void';
  message: string;
}

/** Builds one Program from a tsconfig (all checks share it). */
export function programFromConfig(configPath: string): ts.Program;

/** Every forgotten promise in the program's own files, or in `files` (absolute paths) when given. */
export function findForgottenPromises(program: ts.Program, files?: readonly string[]): ForgottenPromise[];
