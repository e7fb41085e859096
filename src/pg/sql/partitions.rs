//! Partitions across a Citus cluster: `sno_partitions()` says which partitions and sequences this
//! server generates in, and `sno_check_partitions()`, on a coordinator, asks every node and
//! refuses when two of them could make the same ID.
//!
//! Why a check besides `sno.partition_source = 'citus'` (the partition from the node's Citus
//! group, `partition_watch`): that source is a choice made at start-up, and nodes with partitions
//! set by hand (or derived) still need the comparison. The coordinator knows every node and can
//! reach it (run_command_on_all_nodes), so it can compare what each node actually uses, sequence
//! ranges included, and name the nodes that clash. Citus has no hook for an extension when a
//! node is added, so besides the explicit call after `citus_add_node` (docs/citus.md), a
//! coordinator runs the same comparison on its own, periodically (`partition_watch`).
//!
//! Citus is only ever reached through SQL text run by SPI, so sno neither links to it nor needs
//! it: in a database without the citus extension the check says so.

use crate::generator::Config;
use crate::pg::server::shared_memory::shared;
use crate::pg::support::errors;
use crate::pg::support::settings::{self, NotWorking};
use pgrx::prelude::*;

/// The generators that write IDs with a partition, as `sno_partitions()` names them.
const LIVE: &str = "sno_generate";
const BACKFILL: &str = "sno_generate_at";

/// One partition and sequence range a server generates in.
#[derive(Clone, Debug, PartialEq)]
struct Claim {
    generator: String,
    partition: i32,
    sequence_min: i32,
    sequence_max: i32,
}

impl Claim {
    fn overlaps(&self, other: &Claim) -> bool {
        self.partition == other.partition
            && self.sequence_min <= other.sequence_max
            && other.sequence_min <= self.sequence_max
    }
}

/// This server's claims: none when sno is not preloaded (it cannot generate then).
fn local_claims() -> Vec<Claim> {
    let Some(shared) = shared() else {
        return Vec::new();
    };
    let mut claims = Vec::new();
    // A sequence range that cannot work is not applied: the generator keeps the one it has. A
    // partition not known yet (from the Citus group) is none: nothing is generated meanwhile.
    let live: Option<Config> = match shared.requested_settings() {
        Ok(config) => Some(config),
        Err(NotWorking::Pool(_)) => Some(shared.generator().config()),
        Err(_) => None,
    };
    if let Some(live) = live {
        claims.push(Claim {
            generator: LIVE.into(),
            partition: live.partition.into(),
            sequence_min: live.sequence_min.into(),
            sequence_max: live.sequence_max.into(),
        });
    }
    // Backfills use every sequence of their partition.
    if let Some(partition) = settings::backfill_partition() {
        claims.push(Claim {
            generator: BACKFILL.into(),
            partition: partition.into(),
            sequence_min: 0,
            sequence_max: u16::MAX.into(),
        });
    }
    claims
}

#[allow(clippy::type_complexity)]
#[pg_extern(sql = false)]
fn sno_partitions() -> TableIterator<
    'static,
    (
        name!(generator, String),
        name!(partition, i32),
        name!(sequence_min, i32),
        name!(sequence_max, i32),
    ),
> {
    TableIterator::new(
        local_claims()
            .into_iter()
            .map(|c| (c.generator, c.partition, c.sequence_min, c.sequence_max)),
    )
}

/// A node's claims as one line of text (run_command_on_all_nodes returns one value per node):
/// "generator partition min max" joined by commas, empty when the node cannot generate.
///
/// Every name in it and in the queries below is schema-qualified, and the SQL function runs
/// with `SET search_path = pg_catalog, pg_temp` (sql/parts/citus.sql): a role that can create
/// objects in a schema on the caller's search_path (`public`, where PUBLIC may still create)
/// must not have its own `format`, `concat_ws` or `string_agg` run with the caller's rights, here
/// or on the nodes, where the command runs with the connection's own search_path.
const CLAIMS_AS_TEXT: &str = "SELECT pg_catalog.format(\
    $$SELECT coalesce(pg_catalog.string_agg(pg_catalog.concat_ws(' ', generator, \
      \"partition\", sequence_min, sequence_max), ','), '') FROM %I.sno_partitions()$$, \
      n.nspname) \
    FROM pg_catalog.pg_extension AS e JOIN pg_catalog.pg_namespace AS n \
      ON n.oid OPERATOR(pg_catalog.=) e.extnamespace \
    WHERE e.extname OPERATOR(pg_catalog.=) 'sno'";

/// Every node of the Citus metadata with its answer, the coordinator among them once it is in
/// the metadata (Citus puts it there when the first worker is added).
const ASK_EVERY_NODE: &str = "SELECT n.nodeid, n.nodename::text, n.nodeport, r.success, r.result \
    FROM pg_catalog.run_command_on_all_nodes($1) AS r JOIN pg_catalog.pg_dist_node AS n \
      USING (nodeid) \
    ORDER BY n.nodeid";

/// A node of the metadata, or (id and name None) the coordinator this runs on when it is not
/// in the metadata itself.
struct Node {
    id: Option<i32>,
    name: Option<String>,
    port: i32,
}

impl Node {
    fn describe(&self) -> String {
        match (self.id, &self.name) {
            (Some(id), Some(name)) => format!("node {id} at {name}:{}", self.port),
            _ => format!("the coordinator on port {}", self.port),
        }
    }
}

/// This server's port when it is not in the metadata, else NULL (one row either way).
const THIS_SERVER_UNLISTED: &str = "SELECT (SELECT pg_catalog.current_setting('port')::integer \
    FROM pg_catalog.pg_dist_local_group AS l \
    WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_dist_node AS n \
                      WHERE n.groupid OPERATOR(pg_catalog.=) l.groupid \
                        AND n.noderole OPERATOR(pg_catalog.=) 'primary'))";

fn parse_claims(text: &str) -> Option<Vec<Claim>> {
    text.split(',')
        .filter(|claim| !claim.is_empty())
        .map(|claim| {
            let mut fields = claim.split(' ');
            let generator = fields.next()?.to_string();
            let mut number = || fields.next()?.parse::<i32>().ok();
            Some(Claim {
                generator,
                partition: number()?,
                sequence_min: number()?,
                sequence_max: number()?,
            })
        })
        .collect()
}

/// Why the partitions of a Citus cluster could not be compared.
pub(crate) enum NotChecked {
    /// The database has no citus extension.
    NoCitus,
    /// A node that could not be asked (down, or without sno), and what it answered.
    NodeDidNotAnswer { node: String, answer: String },
}

/// Every node's claims, or why they could not all be read.
fn claims_of_every_node() -> Result<Vec<(Node, Vec<Claim>)>, NotChecked> {
    Spi::connect(|client| {
        let has_citus = client
            .select(
                "SELECT EXISTS (SELECT FROM pg_catalog.pg_extension \
                 WHERE extname OPERATOR(pg_catalog.=) 'citus')",
                None,
                &[],
            )?
            .first()
            .get_one::<bool>()?;
        if has_citus != Some(true) {
            return Ok(Err(NotChecked::NoCitus));
        }
        let command = client
            .select(CLAIMS_AS_TEXT, None, &[])?
            .first()
            .get_one::<String>()?
            .expect("the extension's own schema");
        let mut nodes = Vec::new();
        for row in client.select(ASK_EVERY_NODE, None, &[command.as_str().into()])? {
            let node = Node {
                id: row.get::<i32>(1)?,
                name: row.get::<String>(2)?,
                port: row.get::<i32>(3)?.unwrap_or_default(),
            };
            let answer = row.get::<String>(5)?.unwrap_or_default();
            let claims = match row.get::<bool>(4)? {
                Some(true) => parse_claims(&answer),
                _ => None,
            };
            match claims {
                Some(claims) => nodes.push((node, claims)),
                None => {
                    let node = node.describe();
                    return Ok(Err(NotChecked::NodeDidNotAnswer { node, answer }));
                }
            }
        }
        // run_command_on_all_nodes asks the nodes of pg_dist_node only: a coordinator that was
        // never added there (citus_set_coordinator_host) answers for itself.
        let unlisted = client.select(THIS_SERVER_UNLISTED, None, &[])?;
        if let Some(port) = unlisted.first().get_one::<i32>()? {
            let this_server = Node {
                id: None,
                name: None,
                port,
            };
            nodes.insert(0, (this_server, local_claims()));
        }
        Ok::<_, pgrx::spi::SpiError>(Ok(nodes))
    })
    .unwrap_or_else(|error| panic!("sno_check_partitions: {error}"))
}

/// How many nodes were asked and the clashes among them, described; for the watch
/// (`partition_watch`), which runs in the database of the Citus metadata.
pub(crate) fn find_clashes() -> Result<(usize, Vec<String>), NotChecked> {
    let nodes = claims_of_every_node()?;
    Ok((nodes.len(), clashes(&nodes)))
}

/// Each pair of claims of different nodes that could make the same ID, described.
fn clashes(nodes: &[(Node, Vec<Claim>)]) -> Vec<String> {
    let mut found = Vec::new();
    for (i, (node, claims)) in nodes.iter().enumerate() {
        for (other_node, other_claims) in &nodes[i + 1..] {
            for claim in claims {
                for other in other_claims.iter().filter(|other| claim.overlaps(other)) {
                    found.push(format!(
                        "{} ({}) and {} ({}) both use partition {} with sequences {}..{} and \
                         {}..{}.",
                        node.describe(),
                        claim.generator,
                        other_node.describe(),
                        other.generator,
                        claim.partition,
                        claim.sequence_min,
                        claim.sequence_max,
                        other.sequence_min,
                        other.sequence_max
                    ));
                }
            }
        }
    }
    found
}

#[allow(clippy::type_complexity)]
#[pg_extern(sql = false)]
fn sno_check_partitions() -> TableIterator<
    'static,
    (
        name!(nodeid, Option<i32>),
        name!(nodename, Option<String>),
        name!(nodeport, i32),
        name!(generator, String),
        name!(partition, i32),
        name!(sequence_min, i32),
        name!(sequence_max, i32),
    ),
> {
    let nodes = match claims_of_every_node() {
        Ok(nodes) => nodes,
        Err(NotChecked::NoCitus) => errors::citus_missing(),
        Err(NotChecked::NodeDidNotAnswer { node, answer }) => {
            errors::node_did_not_answer(&node, &answer)
        }
    };
    let found = clashes(&nodes);
    if !found.is_empty() {
        errors::partitions_shared(&found);
    }
    TableIterator::new(nodes.into_iter().flat_map(|(node, claims)| {
        claims.into_iter().map(move |claim| {
            (
                node.id,
                node.name.clone(),
                node.port,
                claim.generator,
                claim.partition,
                claim.sequence_min,
                claim.sequence_max,
            )
        })
    }))
}
