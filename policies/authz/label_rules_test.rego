package authz_test

import data.authz

# org and user come from decision_test.rego: u_ops is a Viewer in team t_ops
_checkout := "{namespace=\"checkout\"}"

_payments := "{namespace=\"payments\", env=~\"prod|staging\"}"

_rules := {
	"c_open": {
		"team:t_ops": [_checkout],
		"user:u_ops": [_payments, _checkout],
		"role:Editor": [_payments],
	},
	"c_empty": {},
}

_label_rules(subject, uid) := answer if {
	answer := authz.label_rules with input as {"subject": subject, "org_id": "org_main", "resource": {"kind": "connectors", "uid": uid}}
		with data.org_id as org.org_id
		with data.settings as org.settings
		with data.members as org.members
		with data.teams as org.teams
		with data.builtin_roles as org.builtin_roles
		with data.roles as org.roles
		with data.folders as org.folders
		with data.dashboards as org.dashboards
		with data.legacy_acl as org.legacy_acl
		with data.label_rules as _rules
}

test_a_connector_without_rules_applies_none if {
	_label_rules(user("u_viewer"), "c_restricted") == {"mode": "none", "selectors": []}
	_label_rules(user("u_viewer"), "c_empty") == {"mode": "none", "selectors": []}
}

test_the_rules_of_the_subject_its_teams_and_its_role_are_ored_each_once if {
	_label_rules(user("u_ops"), "c_open") == {"mode": "applied", "selectors": sort([_checkout, _payments])}
	_label_rules(user("u_editor"), "c_open") == {"mode": "applied", "selectors": [_payments]}
}

test_a_member_no_rule_names_is_denied if {
	_label_rules(user("u_viewer"), "c_open") == {"mode": "denied", "selectors": []}
}

test_org_admins_bypass if {
	_label_rules(user("u_admin"), "c_open") == {"mode": "bypass", "selectors": []}
}

test_a_connector_admin_bypasses if {
	admins := object.union(org.roles, {"managed:users:u_ops:permissions": {"connectors.permissions:write": {"connectors:uid:c_open": true}}})
	answer := authz.label_rules with input as {"subject": user("u_ops"), "org_id": "org_main", "resource": {"kind": "connectors", "uid": "c_open"}}
		with data.org_id as org.org_id
		with data.members as org.members
		with data.teams as org.teams
		with data.builtin_roles as org.builtin_roles
		with data.roles as admins
		with data.folders as org.folders
		with data.legacy_acl as org.legacy_acl
		with data.settings as org.settings
		with data.label_rules as _rules
	answer == {"mode": "bypass", "selectors": []}
}

test_a_disabled_subject_or_a_non_member_gets_nothing if {
	_label_rules(object.union(user("u_ops"), {"disabled": true}), "c_open") == {"mode": "denied", "selectors": []}
	_label_rules(object.union(user("u_admin"), {"disabled": true}), "c_open") == {"mode": "denied", "selectors": []}
	_label_rules(user("u_stranger"), "c_open") == {"mode": "denied", "selectors": []}
}
