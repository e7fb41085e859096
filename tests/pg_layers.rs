//! The extension's layers (src/pg): each module imports only from the layers below its own,
//! and the modules of one layer import one another without a ring, so that a newcomer can read
//! `support`, then `server`, then `recovery`, then `sql`, each without the ones after it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The layers, lowest first.
const LAYERS: [&str; 4] = ["support", "server", "recovery", "sql"];

/// Every module of every layer, with the `crate::pg::LAYER::MODULE` paths it names.
fn modules() -> BTreeMap<(usize, String), BTreeSet<(usize, String)>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pg");
    let mut modules = BTreeMap::new();
    for (rank, layer) in LAYERS.iter().enumerate() {
        for entry in fs::read_dir(root.join(layer)).expect("the layer's directory") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if name == "mod" {
                continue;
            }
            // A module with submodules is a directory: its files are one module, and reach one
            // another through `super::`, but the other modules only by their layer's name.
            let (text, outside) = if path.is_dir() {
                (text_of_directory(&path), "super::super::")
            } else {
                (fs::read_to_string(&path).expect("a source file"), "super::")
            };
            assert!(
                !text.contains(outside) || text.contains("mod tests"),
                "{}: imports through `{outside}`; name the layer (crate::pg::LAYER::MODULE)",
                path.display()
            );
            modules.insert((rank, name), names_in(&text));
        }
    }
    modules
}

/// The text of every Rust file in a module's directory, at any depth.
fn text_of_directory(directory: &Path) -> String {
    let mut text = String::new();
    for entry in fs::read_dir(directory).expect("the module's directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            text += &text_of_directory(&path);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            text += &fs::read_to_string(&path).expect("a source file");
        }
    }
    text
}

/// The `(layer, module)` pairs that `crate::pg::LAYER::MODULE` names in `text`.
fn names_in(text: &str) -> BTreeSet<(usize, String)> {
    let mut names = BTreeSet::new();
    for (at, _) in text.match_indices("crate::pg::") {
        let mut parts = text[at + "crate::pg::".len()..].split("::");
        let layer = parts.next().unwrap_or_default();
        let module: String = parts
            .next()
            .unwrap_or_default()
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if let Some(rank) = LAYERS.iter().position(|known| *known == layer) {
            names.insert((rank, module));
        }
    }
    names
}

#[test]
fn each_layer_imports_only_from_those_below() {
    for ((rank, module), imports) in modules() {
        for (imported_rank, imported) in imports {
            assert!(
                imported_rank <= rank,
                "{}::{module} imports {}::{imported}, a layer above it",
                LAYERS[rank],
                LAYERS[imported_rank]
            );
        }
    }
}

#[test]
fn no_module_imports_in_a_ring() {
    let modules = modules();
    // Depth-first search from each module, along imports within its layer.
    fn reaches(
        modules: &BTreeMap<(usize, String), BTreeSet<(usize, String)>>,
        from: &(usize, String),
        target: &(usize, String),
        seen: &mut BTreeSet<(usize, String)>,
    ) -> bool {
        for next in modules.get(from).into_iter().flatten() {
            if next.0 != from.0 || next == from {
                continue;
            }
            if next == target || (seen.insert(next.clone()) && reaches(modules, next, target, seen))
            {
                return true;
            }
        }
        false
    }
    for module in modules.keys() {
        assert!(
            !reaches(&modules, module, module, &mut BTreeSet::new()),
            "{}::{} is part of a ring of imports",
            LAYERS[module.0],
            module.1
        );
    }
}

#[test]
fn the_checks_see_every_layer() {
    let modules = modules();
    for (rank, layer) in LAYERS.iter().enumerate() {
        assert!(
            modules.keys().filter(|(r, _)| *r == rank).count() >= 3,
            "{layer} has almost no modules: is the layout the one this test knows?"
        );
    }
    // And a ring would be seen: two modules of a layer that import each other.
    let ring = names_in("use crate::pg::server::persistence; use crate::pg::sql::parts::x;");
    assert_eq!(
        ring,
        BTreeSet::from([(1, "persistence".to_string()), (3, "parts".to_string())])
    );
}
