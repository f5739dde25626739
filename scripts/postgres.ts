// One connection to a PostgreSQL server for the length of `work`: what the tools and the tests do
// beside the service (create and drop databases, read sizes).
import pg from 'pg';

export async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
