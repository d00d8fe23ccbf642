;; A `child` component that checks what the sandbox shows it: it exits with
;; success only if it has no environment variables, no arguments and no
;; preopened directories. Each list's length is also written to the start
;; channel as three little-endian u32s, so a failure can say which one.
(component
  (import "wasi:cli/environment@0.2.0" (instance $environment
    (export "get-environment" (func (result (list (tuple string string)))))
    (export "get-arguments" (func (result (list string))))
  ))
  (import "wasi:filesystem/types@0.2.0" (instance $types
    (export "descriptor" (type (sub resource)))
  ))
  (alias export $types "descriptor" (type $descriptor))
  (import "wasi:filesystem/preopens@0.2.0" (instance $preopens
    (alias outer 1 $descriptor (type $d))
    (export "descriptor" (type $desc (eq $d)))
    (export "get-directories" (func (result (list (tuple (own $desc) string)))))
  ))
  (import "wasmwire:child/start-channel@1.0.0" (instance $start
    (export "write" (func (param "bytes" (list u8)) (result (result (error string)))))
  ))

  ;; Memory and a bump allocator, instantiated first so that the imports can
  ;; be lowered into them.
  (core module $Memory
    (memory (export "memory") 1)
    (global $next (mut i32) (i32.const 4096))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $at i32)
      (local.set $at
        (i32.and
          (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
          (i32.sub (i32.const 0) (local.get 2))))
      (global.set $next (i32.add (local.get $at) (local.get 3)))
      (local.get $at))
  )
  (core instance $memory (instantiate $Memory))
  (alias core export $memory "memory" (core memory $mem))
  (alias core export $memory "realloc" (core func $realloc))

  (core func $get-environment (canon lower (func $environment "get-environment") (memory $mem) (realloc $realloc)))
  (core func $get-arguments (canon lower (func $environment "get-arguments") (memory $mem) (realloc $realloc)))
  (core func $get-directories (canon lower (func $preopens "get-directories") (memory $mem) (realloc $realloc)))
  (core func $write (canon lower (func $start "write") (memory $mem) (realloc $realloc) string-encoding=utf8))

  (core module $Probe
    (import "memory" "memory" (memory 1))
    (import "wasi" "get-environment" (func $get-environment (param i32)))
    (import "wasi" "get-arguments" (func $get-arguments (param i32)))
    (import "wasi" "get-directories" (func $get-directories (param i32)))
    (import "wasi" "write" (func $write (param i32 i32 i32)))
    ;; Each call returns (pointer, length) at 16, 24, 32; the lengths are
    ;; copied to 64..76 and written out.
    (func (export "run") (result i32)
      (call $get-environment (i32.const 16))
      (call $get-arguments (i32.const 24))
      (call $get-directories (i32.const 32))
      (i32.store (i32.const 64) (i32.load (i32.const 20)))
      (i32.store (i32.const 68) (i32.load (i32.const 28)))
      (i32.store (i32.const 72) (i32.load (i32.const 36)))
      (call $write (i32.const 64) (i32.const 12) (i32.const 48))
      ;; result: 0 = ok, 1 = err
      (i32.ne
        (i32.const 0)
        (i32.or (i32.load (i32.const 64))
          (i32.or (i32.load (i32.const 68)) (i32.load (i32.const 72))))))
  )
  (core instance $probe (instantiate $Probe
    (with "memory" (instance $memory))
    (with "wasi" (instance
      (export "get-environment" (func $get-environment))
      (export "get-arguments" (func $get-arguments))
      (export "get-directories" (func $get-directories))
      (export "write" (func $write))
    ))
  ))
  (func $run (result (result)) (canon lift (core func $probe "run")))
  (instance $run-instance (export "run" (func $run)))
  (export "wasi:cli/run@0.2.0" (instance $run-instance))
)
