"""`harness sign` and `harness keygen`: signed result sets (harness.verify.provenance)."""

from __future__ import annotations

from pathlib import Path

import click

from harness.core.paths import REPO_ROOT
from harness.verify.keys import SigningKeyError, generate, load_private_key
from harness.verify.provenance import ProvenanceError, sign_set

DEFAULT_KEY = Path("~/.config/mathsolver-kit/signing/id_ed25519")


@click.command()
@click.argument("results", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--key",
    "key_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="An ed25519 private key: OpenSSH's (e.g. ~/.ssh/id_ed25519) or one `harness keygen` made. An "
    "encrypted key takes its passphrase from $HARNESS_SIGNING_PASSPHRASE.",
)
def sign(results: Path, key_path: Path) -> None:
    """Sign a result set: an in-toto statement (every file of its sums with its sha256, and what produced it: the
    kit's commit, images, locks, dataset, model revisions, executor policy, launcher, server version) in a DSSE
    envelope signed with ed25519, written to RESULTS/provenance.dsse.json. Run `harness checksums update` first
    when the set changed; `harness verify --signed-by ALLOWED_SIGNERS` checks it."""
    try:
        key = load_private_key(key_path.expanduser())
        path = sign_set(results, key)
    except (SigningKeyError, ProvenanceError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"signed: {path}")


@click.command()
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_KEY,
    show_default=True,
    help="Where the private key goes (never inside the kit's checkout); OUT.pub too.",
)
@click.option(
    "--principal",
    default="mathsolver-kit-results",
    show_default=True,
    help="The name the allowed-signers line gives the key.",
)
def keygen(out_path: Path, principal: str) -> None:
    """Make a new ed25519 signing key (OpenSSH format, mode 0600) and print its allowed-signers line."""
    out_path = out_path.expanduser().resolve()
    if out_path.is_relative_to(REPO_ROOT):
        raise click.ClickException(f"{out_path}: inside the kit's checkout; keep a private key outside it")
    try:
        pub, fp = generate(out_path, principal)
    except SigningKeyError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"private key: {out_path} (keep it; a re-sign needs it)")
    click.echo(f"public key:  {pub} ({fp})")
    click.echo("allowed-signers line (e.g. for checksums/allowed_signers):")
    click.echo(f"{principal} {pub.read_text().split()[0]} {pub.read_text().split()[1]}")
