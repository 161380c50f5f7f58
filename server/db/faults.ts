// Telling "the database is not there right now" apart from every other
// failure. A request that needs the database while it restarts, or whose
// connection an operator killed, gets a quick 503 (relay: OpenAI's error
// shape, console: the envelope) instead of a 500; the pools reconnect by
// themselves once the server answers again. Only errors that come out of the
// database driver are marked (tagDatabaseFaults), so a refused SMTP or
// upstream connection is never mistaken for a database outage.
import type { DatabaseConnection, Dialect, Driver, TransactionSettings } from 'kysely';

/** Node socket errors that mean the server cannot be reached or went away. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOENT',
]);

/** mysql2 / MariaDB codes for a lost, killed or refused connection. */
const MYSQL_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CONNECTION_KILLED', // MariaDB 1927: KILL of the connection
  'ER_QUERY_INTERRUPTED', // 1317: KILL QUERY, or the server shutting down
  'ER_SERVER_SHUTDOWN', // 1053
  'ER_CON_COUNT_ERROR', // 1040: too many connections
  'ER_SERVER_GONE_ERROR',
  'ER_SERVER_LOST',
]);

/** PostgreSQL SQLSTATEs: class 08 (connection exception), shutdowns, too many connections. */
const POSTGRES_STATES = /^(08...|57P01|57P02|57P03|53300)$/;

/** What pg says (it sets no code) when a connection breaks, cannot be made in time, or was broken before. */
const POSTGRES_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

const MYSQL_CLOSED = /^(Can't add new command when connection is in closed state|Can't write in closed state|Connection lost)/;

/** Whether a driver error means the connection is gone or cannot be made. */
export function isConnectionFault(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false;
  const { code, message, errors, cause } = error as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || MYSQL_CODES.has(code) || POSTGRES_STATES.test(code))) return true;
  if (typeof message === 'string' && (POSTGRES_MESSAGES.test(message) || MYSQL_CLOSED.test(message))) return true;
  // Node reports a refused connection to a name with several addresses as an AggregateError
  if (Array.isArray(errors) && errors.some((inner) => isConnectionFault(inner, depth + 1))) return true;
  return cause !== undefined && isConnectionFault(cause, depth + 1);
}

export const DATABASE_UNAVAILABLE_MESSAGE = 'the database is unavailable right now, please try again shortly';

const DATABASE_FAULT = Symbol.for('switchboard.databaseUnavailable');

/** True for an error the database driver threw because the server was unreachable or the connection broke. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && DATABASE_FAULT in error;
}

const NOTHING_SENT = Symbol.for('switchboard.databaseUnreached');

/**
 * True when the failure came before any statement reached the server (no
 * connection could be had), so the database certainly changed nothing. Any
 * other fault may have struck after a COMMIT was applied but before its
 * answer arrived.
 */
export function databaseChangedNothing(error: unknown): boolean {
  return typeof error === 'object' && error !== null && NOTHING_SENT in error;
}

function mark(error: unknown): never {
  if (typeof error === 'object' && error !== null && isConnectionFault(error)) {
    Object.defineProperty(error, DATABASE_FAULT, { value: true, enumerable: false });
  }
  throw error;
}

function markUnreached(error: unknown): never {
  if (typeof error === 'object' && error !== null && isConnectionFault(error)) {
    Object.defineProperty(error, NOTHING_SENT, { value: true, enumerable: false });
  }
  return mark(error);
}

/**
 * The same dialect, with every connection fault its driver throws marked for
 * isDatabaseUnavailable. Kysely's drivers keep private state on their
 * connection objects, so the inner driver always gets its own connection back.
 */
export function tagDatabaseFaults(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => tagDriver(dialect.createDriver()),
  };
}

function tagDriver(driver: Driver): Driver {
  const inner = new WeakMap<DatabaseConnection, DatabaseConnection>();
  const own = (connection: DatabaseConnection) => inner.get(connection) ?? connection;
  const wrappers = new WeakMap<DatabaseConnection, DatabaseConnection>();
  const wrap = (connection: DatabaseConnection): DatabaseConnection => {
    let wrapper = wrappers.get(connection);
    if (!wrapper) {
      wrapper = {
        executeQuery: <R>(query: Parameters<DatabaseConnection['executeQuery']>[0]) => connection.executeQuery<R>(query).catch(mark),
        async *streamQuery(query, chunkSize) {
          try {
            yield* connection.streamQuery(query, chunkSize);
          } catch (error) {
            mark(error);
          }
        },
      };
      wrappers.set(connection, wrapper);
      inner.set(wrapper, connection);
    }
    return wrapper;
  };
  return {
    init: () => driver.init().catch(mark),
    acquireConnection: () => driver.acquireConnection().then(wrap, markUnreached),
    beginTransaction: (connection: DatabaseConnection, settings: TransactionSettings) =>
      driver.beginTransaction(own(connection), settings).catch(mark),
    commitTransaction: (connection) => driver.commitTransaction(own(connection)).catch(mark),
    rollbackTransaction: (connection) => driver.rollbackTransaction(own(connection)).catch(mark),
    ...(driver.savepoint && { savepoint: (connection, name, compile) => driver.savepoint!(own(connection), name, compile).catch(mark) }),
    ...(driver.rollbackToSavepoint && {
      rollbackToSavepoint: (connection, name, compile) => driver.rollbackToSavepoint!(own(connection), name, compile).catch(mark),
    }),
    ...(driver.releaseSavepoint && {
      releaseSavepoint: (connection, name, compile) => driver.releaseSavepoint!(own(connection), name, compile).catch(mark),
    }),
    releaseConnection: (connection) => driver.releaseConnection(own(connection)),
    destroy: () => driver.destroy(),
  };
}
