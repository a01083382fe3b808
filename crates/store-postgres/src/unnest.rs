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
    /// Whether the last column is each row's batch item (see [`Rows::items`]).
    tagged: bool,
}

impl<'a> Rows<'a> {
    pub fn new(len: usize) -> Self {
        Self {
            columns: Vec::new(),
            arrays: Vec::new(),
            len,
            tagged: false,
        }
    }

    /// Adds a column: its name, the SQL type of its values, and one value per row.
    pub fn column<T>(mut self, name: &'static str, sql_type: &'static str, values: Vec<T>) -> Self
    where
        T: ToSql + Sync + Send + 'a,
    {
        debug_assert_eq!(values.len(), self.len, "column {name} has a value per row");
        debug_assert!(!self.tagged, "the batch items are the last column");
        self.columns.push((name, sql_type));
        self.arrays.push(Box::new(values));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Tags each row with the item of a batch it belongs to, as a last column `item` that
    /// the rows are selected by and that is not inserted.
    pub fn items(self, items: Vec<i32>) -> Self {
        let mut rows = self.column("item", "int4", items);
        rows.tagged = true;
        rows
    }

    /// `UNNEST(...) AS r(columns)`, its parameters numbered from `first`.
    pub fn unnest_sql(&self, first: usize) -> String {
        let names: Vec<&str> = self.columns.iter().map(|(name, _)| *name).collect();
        let arrays: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, (_, sql_type))| format!("${}::{sql_type}[]", first + i))
            .collect();
        format!("UNNEST({}) AS r({})", arrays.join(", "), names.join(", "))
    }

    /// `INSERT INTO {table} (columns) SELECT columns FROM UNNEST(...) AS r(...)`, its
    /// parameters numbered from `first`; the caller adds a `WHERE` or `ON CONFLICT` clause.
    pub fn insert_sql(&self, table: &str, first: usize) -> String {
        let inserted = self.columns.len() - usize::from(self.tagged);
        let names: Vec<&str> = self
            .columns
            .iter()
            .take(inserted)
            .map(|(name, _)| *name)
            .collect();
        let names = names.join(", ");
        format!(
            "INSERT INTO {table} ({names}) SELECT {names} FROM {}",
            self.unnest_sql(first)
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
