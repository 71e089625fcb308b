#!/usr/bin/env bash
# Checks that every ```kotlin example of docs/language.md compiles without errors or warnings:
# each block becomes one workflow file of a scratch project (with the prompts and rubrics of
# examples/), then `hensuc check --deny-warnings` runs on the project.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/workflows"
cp -r examples/prompts examples/rubrics examples/commands.yaml "$scratch/"

awk -v dir="$scratch/workflows" '
    /^```kotlin$/ { n++; file = sprintf("%s/example-%02d.hwf", dir, n); inside = 1; next }
    /^```$/ && inside { inside = 0; close(file); next }
    inside { print > file }
' docs/language.md

count="$(ls "$scratch/workflows" | wc -l)"
echo "checking $count examples of docs/language.md"
cargo run -q -p hensuc -- check --deny-warnings -d "$scratch"
