//! Drops a table with purge through an Iceberg REST catalog with iceberg-rust's own REST client
//! (`Catalog::purge_table` sends purgeRequested=true): the engines tier's Rust client of the
//! front door.
//!
//!     iceberg-rust-client URI TOKEN NAMESPACE TABLE

use std::collections::HashMap;
use std::process::ExitCode;

use iceberg::{Catalog, CatalogBuilder, TableIdent};
use iceberg_catalog_rest::RestCatalogBuilder;

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: iceberg-rust-client URI TOKEN NAMESPACE TABLE");
        return ExitCode::from(2);
    }
    let props = HashMap::from([
        ("uri".to_string(), args[1].clone()),
        ("token".to_string(), args[2].clone()),
    ]);
    let door = match RestCatalogBuilder::default().load("door", props).await {
        Ok(door) => door,
        Err(error) => {
            eprintln!("connecting: {error}");
            return ExitCode::from(1);
        }
    };
    let table = match TableIdent::from_strs([args[3].as_str(), args[4].as_str()]) {
        Ok(table) => table,
        Err(error) => {
            eprintln!("table: {error}");
            return ExitCode::from(2);
        }
    };
    match door.purge_table(&table).await {
        Ok(()) => {
            println!("purged {} {}", args[3], args[4]);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("purging: {error}");
            ExitCode::from(1)
        }
    }
}
