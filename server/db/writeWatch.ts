// A Kysely plugin that reports every INSERT, UPDATE and DELETE made through
// this process's database handle: which table, and for an UPDATE which
// columns. In-memory caches use it to drop what a write made stale, whichever
// route or repository did the write.
import type {
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/** Called after the statement ran (and before, so no read in between can cache the old row). */
export type WriteListener = (table: string, columns: readonly string[] | 'all') => void;

interface NamedNode extends OperationNode {
  table?: { identifier?: { name?: string } };
  name?: string;
  node?: NamedNode;
}

function tableName(node: NamedNode | undefined): string | undefined {
  if (!node) return undefined;
  if (node.kind === 'TableNode') return node.table?.identifier?.name;
  if (node.kind === 'AliasNode') return tableName(node.node);
  return undefined;
}

function describeWrite(node: RootOperationNode): { table: string; columns: readonly string[] | 'all' } | undefined {
  switch (node.kind) {
    case 'InsertQueryNode': {
      const table = tableName(node.into);
      return table ? { table, columns: 'all' } : undefined;
    }
    case 'DeleteQueryNode': {
      const table = tableName(node.from.froms[0]);
      return table ? { table, columns: 'all' } : undefined;
    }
    case 'UpdateQueryNode': {
      const table = tableName(node.table);
      if (!table) return undefined;
      const columns = (node.updates ?? []).map(
        (update) => (update.column as unknown as { column?: { name?: string } }).column?.name ?? '*',
      );
      return { table, columns };
    }
    default:
      return undefined;
  }
}

export class WriteWatchPlugin implements KyselyPlugin {
  private readonly writes = new WeakMap<object, { table: string; columns: readonly string[] | 'all' }>();

  constructor(private readonly listener: WriteListener) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const write = describeWrite(args.node);
    if (write) {
      this.writes.set(args.queryId, write);
      this.listener(write.table, write.columns);
    }
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const write = this.writes.get(args.queryId);
    if (write) this.listener(write.table, write.columns);
    return Promise.resolve(args.result);
  }
}
