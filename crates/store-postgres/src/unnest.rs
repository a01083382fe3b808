//! Many rows in one statement: each column is sent as one array parameter and `UNNEST` turns
//! the arrays back into rows. A poll writes dozens of rows; a statement per row would
//! dominate its cost.

use deadpool_postgres::GenericClient;
use tidemark_store::StoreResult;
use tokio_postgres::types::ToSql;

use crate::convert::backend;

/// A statement parameter owned by the statement being built.
pub type Param<'a> = Box<dyn ToSql + Sync + Send + 'a>;

/// The rows of one table as column arrays, named and typed beside their values so the SQL
/// and the parameters cannot drift apart.
pub struct Rows<'a> {
    columns: Vec<(&'static str, &'static str)>,
    arrays: Vec<Param<'a>>,
    len: usize,
}

impl<'a> Rows<'a> {
    pub fn new(len: usize) -> Self {
        Self {
            columns: Vec::new(),
            arrays: Vec::new(),
            len,
        }
    }

    /// Adds a column: its name, the SQL type of its values, and one value per row.
    pub fn column<T>(mut self, name: &'static str, sql_type: &'static str, values: Vec<T>) -> Self
    where
        T: ToSql + Sync + Send + 'a,
    {
        debug_assert_eq!(values.len(), self.len, "column {name} has a value per row");
        self.columns.push((name, sql_type));
        self.arrays.push(Box::new(values));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `INSERT INTO {table} (columns) SELECT * FROM UNNEST(...)`, its parameters numbered
    /// from `first`; the caller adds a `WHERE` or `ON CONFLICT` clause.
    pub fn insert_sql(&self, table: &str, first: usize) -> String {
        let names: Vec<&str> = self.columns.iter().map(|(name, _)| *name).collect();
        let arrays: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, (_, sql_type))| format!("${}::{sql_type}[]", first + i))
            .collect();
        format!(
            "INSERT INTO {table} ({}) SELECT * FROM UNNEST({})",
            names.join(", "),
            arrays.join(", ")
        )
    }

    pub fn into_params(self) -> Vec<Param<'a>> {
        self.arrays
    }
}

/// The parameters of a statement as the driver takes them.
pub fn as_refs<'p>(params: &'p [Param<'_>]) -> Vec<&'p (dyn ToSql + Sync)> {
    params
        .iter()
        .map(|param| -> &(dyn ToSql + Sync) { param.as_ref() })
        .collect()
}

/// Inserts `rows` into `table` in one statement; `on_conflict` may be empty. Nothing to do
/// for no rows.
pub async fn insert(
    client: &impl GenericClient,
    table: &str,
    rows: Rows<'_>,
    on_conflict: &str,
) -> StoreResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let sql = format!("{} {on_conflict}", rows.insert_sql(table, 1));
    let statement = client.prepare_cached(&sql).await.map_err(backend)?;
    client
        .execute(&statement, &as_refs(&rows.into_params()))
        .await
        .map_err(backend)?;
    Ok(())
}
