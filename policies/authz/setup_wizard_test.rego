package authz_test

import data.authz

# The setup wizard through the decision entry point (setup/setup.rego), on the server-level
# document the service evaluates org_id null with.

_server_document := {"org_id": null, "roles": {"basic:server_admin": {"*": {"*": true}}}}

_not_signed_in := {"id": "", "kind": "anonymous", "server_admin": false, "disabled": false}

_setup_user(server_admin) := {"id": "u1", "kind": "user", "server_admin": server_admin, "disabled": false}

_setup_decide(subject, open) := _setup_decide_input({"subject": subject, "org_id": null, "action": "settings:write", "setup": {"open": open}})

test_anyone_changes_setup_while_it_is_open if {
	_setup_decide(_not_signed_in, true) == {"allow": true, "reasons": [{"kind": "rule", "rule": "setup-open", "action": "settings:write"}]}
}

test_once_closed_a_caller_who_has_not_signed_in_is_told_to if {
	_setup_decide(_not_signed_in, false) == {
		"allow": false,
		"reasons": [{"kind": "subject", "problem": "anonymous"}],
		"message": "setup is done: sign in as a server admin to change it",
	}
}

test_once_closed_only_a_server_admin_changes_it if {
	_setup_decide(_setup_user(true), false) == {"allow": true, "reasons": [{"kind": "grant", "role": "basic:server_admin", "action": "*"}]}
	refused := _setup_decide(_setup_user(false), false)
	not refused.allow
	not refused.message
}

test_an_open_setup_opens_nothing_else if {
	not _setup_decide_input({"subject": _not_signed_in, "org_id": null, "action": "settings:read", "setup": {"open": true}}).allow

	# an org admin holds "*" on "*" in its org, yet settings:write stays a server action there
	in_org := {"subject": _setup_user(false), "org_id": "org_main", "action": "settings:write", "setup": {"open": true}}
	refused := authz.decision with input as in_org
		with data.org_id as "org_main"
		with data.members as {"u1": {"role": "Admin", "teams": [], "roles": []}}
		with data.builtin_roles as {"Admin": ["basic:admin"]}
		with data.roles as {"basic:admin": {"*": {"*": true}}}
	refused == {"allow": false, "reasons": [{"kind": "server-only", "action": "settings:write"}]}
}

test_without_the_fact_setup_is_closed if {
	not _setup_decide_input({"subject": _not_signed_in, "org_id": null, "action": "settings:write"}).allow
	not _setup_decide(_not_signed_in, "true").allow
}

_setup_decide_input(request) := decision if {
	decision := authz.decision with input as request
		with data.org_id as _server_document.org_id
		with data.roles as _server_document.roles
}
