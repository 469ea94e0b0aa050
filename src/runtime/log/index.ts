/**
 * `ts-operator-sdk/log`: the structured JSON logger every runtime package
 * writes to.
 * This file is only the package's public surface.
 */
export { createLogger, silentLogger, type Logger, type LoggerOptions, type LogLevel, type LogFn } from './log.js';
