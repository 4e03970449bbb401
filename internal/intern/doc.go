// Package intern holds equal flat maps of stored objects as one map in memory.
//
//	var t intern.Table
//	t.Intern(obj) // obj's labels, annotations, status entries: shared with equal ones
//
// A flat map holds only strings, numbers, booleans and nulls. Only objects nobody changes in
// place may be interned: the fake's stores and the host cache's informers, whose readers get
// copies. It imports nothing from the module.
package intern
