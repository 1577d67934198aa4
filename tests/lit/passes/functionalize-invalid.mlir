// RUN: ember-opt --ember-functionalize --split-input-file --verify-diagnostics %s

// A mutable function argument: the caller would see the writes.
// expected-error@+1 {{cannot functionalize a function whose signature has a mutable tensor}}
func.func @mutable_argument(%m: !ember.mut<tensor<4xf32>>, %v: tensor<4xf32>) {
  ember.mut.copy %v into %m : tensor<4xf32> into !ember.mut<tensor<4xf32>>
  return
}

// -----

// A declaration with a mutable tensor in its signature.
// expected-error@+1 {{cannot functionalize a function whose signature has a mutable tensor}}
func.func private @external(!ember.mut<tensor<4xf32>>)

// -----

// expected-error@+1 {{cannot functionalize a function whose signature has a mutable tensor}}
func.func private @sink(!ember.mut<tensor<4xf32>>)

// A buffer passed to a call escapes.
func.func @escapes_to_call(%x: tensor<4xf32>) {
  // expected-note@+1 {{mutable tensor defined here}}
  %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  // expected-error@+1 {{mutable tensor escapes into 'func.call'}}
  func.call @sink(%m) : (!ember.mut<tensor<4xf32>>) -> ()
  return
}

// -----

// A view returned from the function escapes (and puts a mutable tensor in
// the signature).
// expected-error@+1 {{cannot functionalize a function whose signature has a mutable tensor}}
func.func @escapes_to_return(%x: tensor<4xf32>) -> !ember.mut<tensor<2xf32>> {
  %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  // expected-note@+1 {{mutable tensor defined here}}
  %v = ember.mut.slice %m[0] [2] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<2xf32>>
  // expected-error@+1 {{mutable tensor escapes into 'func.return'}}
  return %v : !ember.mut<tensor<2xf32>>
}

// -----

// A write inside a nested region to a buffer of the enclosing block.
func.func @write_in_region(%c: i1, %x: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note@+1 {{mutable tensor defined here}}
  %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  scf.if %c {
    // expected-error@+1 {{mutable tensor used in another block or a nested region}}
    ember.mut.copy %v into %m : tensor<4xf32> into !ember.mut<tensor<4xf32>>
  }
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A buffer carried through a loop: a mutable block argument and result.
func.func @loop_carried(%x: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note@+1 {{mutable tensor defined here}}
  %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  // expected-error@+3 {{cannot functionalize mutable block argument #1}}
  // expected-error@+2 {{'scf.for' produces a mutable tensor}}
  // expected-error@+1 {{mutable tensor escapes into 'scf.for'}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %m) -> (!ember.mut<tensor<4xf32>>) {
    scf.yield %a : !ember.mut<tensor<4xf32>>
  }
  return
}

// -----

// Mutable tensors made by something other than from_tensor / slice.
func.func @foreign_producer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'builtin.unrealized_conversion_cast' produces a mutable tensor}}
  %m = builtin.unrealized_conversion_cast %x : tensor<4xf32> to !ember.mut<tensor<4xf32>>
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A write that does not fit the view: the view type is dynamic but the slice
// size is 3.
func.func @write_does_not_fit(%x: tensor<8xf32>, %v: tensor<4xf32>) -> tensor<8xf32> {
  %m = ember.mut.from_tensor %x : tensor<8xf32> -> !ember.mut<tensor<8xf32>>
  %s = ember.mut.slice %m[0] [3] [1] : !ember.mut<tensor<8xf32>> -> !ember.mut<tensor<?xf32>>
  // expected-error@+1 {{value of type 'tensor<4xf32>' does not fit the 'tensor<3xf32>' region it reads or writes}}
  ember.mut.copy %v into %s : tensor<4xf32> into !ember.mut<tensor<?xf32>>
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<8xf32>> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A read that does not fit either.
func.func @read_does_not_fit(%x: tensor<8xf32>) -> tensor<5xf32> {
  %m = ember.mut.from_tensor %x : tensor<8xf32> -> !ember.mut<tensor<8xf32>>
  %s = ember.mut.slice %m[2] [4] [1] : !ember.mut<tensor<8xf32>> -> !ember.mut<tensor<?xf32>>
  // expected-error@+1 {{value of type 'tensor<5xf32>' does not fit the 'tensor<4xf32>' region it reads or writes}}
  %r = ember.mut.to_tensor %s : !ember.mut<tensor<?xf32>> -> tensor<5xf32>
  return %r : tensor<5xf32>
}

// -----

// A nested view outside its parent, which only the static slice size of the
// parent (not its dynamic view type) shows.
func.func @view_out_of_bounds(%x: tensor<8xf32>, %v: tensor<2xf32>) -> tensor<8xf32> {
  %m = ember.mut.from_tensor %x : tensor<8xf32> -> !ember.mut<tensor<8xf32>>
  %s = ember.mut.slice %m[0] [4] [1] : !ember.mut<tensor<8xf32>> -> !ember.mut<tensor<?xf32>>
  // expected-error@+1 {{slice of dim 0 (offset 3, size 2, stride 1) runs past the size 4 of the sliced view}}
  %t = ember.mut.slice %s[3] [2] [1] : !ember.mut<tensor<?xf32>> -> !ember.mut<tensor<2xf32>>
  ember.mut.copy %v into %t : tensor<2xf32> into !ember.mut<tensor<2xf32>>
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<8xf32>> -> tensor<8xf32>
  return %r : tensor<8xf32>
}
