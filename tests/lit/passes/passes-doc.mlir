// docs/passes.md must be what tools/gen-docs.sh passes generates from
// passes/Passes.td and passes/PassesOverview.md.
// RUN: bash %S/../../../tools/gen-docs.sh passes --check
