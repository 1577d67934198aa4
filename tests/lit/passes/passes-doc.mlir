// docs/passes.md must be what passes/gen-passes-doc.sh generates from
// passes/Passes.td and passes/PassesOverview.md.
// RUN: bash %S/../../../passes/gen-passes-doc.sh --check
