module.exports={throttle(){throw new Error("todo")}}
