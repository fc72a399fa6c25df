package authz

import data.authz.activeorg

# METADATA
# title: Active org
# description: |
#   Whether input.subject may act in input.org_id at all: a service-account token only in the org
#   it is pinned to, a user only in an org it is a member of. {allow, reasons}, and a message
#   safe to show on a refusal. The service evaluates it without any org's data document, before
#   it loads the org's (activeorg.rego says why).
# entrypoint: true
active_org := activeorg.decision
